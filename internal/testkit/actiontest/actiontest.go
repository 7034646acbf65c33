package actiontest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/testkit"
	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
	"gopkg.in/yaml.v3"
)

var built struct {
	once sync.Once
	path string
	err  error
}

// Binary returns the path of gns-guard built as the Dockerfile builds it
// (static, trimmed, stripped), once per test process.
func Binary(t testing.TB) string {
	t.Helper()
	built.once.Do(func() {
		root, err := testkit.Root()
		if err != nil {
			built.err = err
			return
		}
		dir, err := os.MkdirTemp("", "gns-guard-bin-")
		if err != nil {
			built.err = err
			return
		}
		giteatest.AtExit(func() { os.RemoveAll(dir) })
		out := filepath.Join(dir, "gns-guard")
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", out, "./cmd/gns-guard")
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if b, err := cmd.CombinedOutput(); err != nil {
			built.err = fmt.Errorf("actiontest: building gns-guard: %v\n%s", err, b)
			return
		}
		built.path = out
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

// Input is one input of action.yml.
type Input struct {
	Name    string
	Default string
}

// Inputs reads action.yml's inputs, in file order.
func Inputs() ([]Input, error) {
	root, err := testkit.Root()
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(root, "action.yml"))
	if err != nil {
		return nil, err
	}
	var doc struct {
		Inputs yaml.Node `yaml:"inputs"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("action.yml: %w", err)
	}
	var ins []Input
	for i := 0; i+1 < len(doc.Inputs.Content); i += 2 {
		var in struct {
			Default string `yaml:"default"`
		}
		if err := doc.Inputs.Content[i+1].Decode(&in); err != nil {
			return nil, fmt.Errorf("action.yml: input %s: %w", doc.Inputs.Content[i].Value, err)
		}
		ins = append(ins, Input{Name: doc.Inputs.Content[i].Value, Default: in.Default})
	}
	return ins, nil
}

// InputEnv is the variable the runner sets for an input: INPUT_ and the
// name upper-cased with spaces as underscores (hyphens stay).
func InputEnv(name string) string {
	return "INPUT_" + strings.ReplaceAll(strings.ToUpper(name), " ", "_")
}

// Step is one guard step as the container runs it.
type Step struct {
	Server      *giteatest.Server
	Owner, Repo string
	// Token is what ${{ github.token }} gives the token input.
	Token string
	// Inputs overrides action.yml inputs by name; the rest take their
	// defaults, as the runner does.
	Inputs map[string]string
	// Env adds or overrides environment variables.
	Env map[string]string
}

// Result is what one run of the step left behind.
type Result struct {
	Code    int
	Stdout  string
	Stderr  string
	Outputs map[string]string
	Summary string
	// Requests is the API request count the guard logged (-1: none logged).
	Requests int
	// AdminRequests are the requests the guard logged making with
	// admin-token (the anchor, the grant list, a lock), beyond Requests.
	AdminRequests int
	// Writes are the writes the guard logged ("wrote: ..." lines).
	Writes []string
}

var (
	requestsLine      = regexp.MustCompile(`(\d+) API request\(s\)`)
	adminRequestsLine = regexp.MustCompile(`and (\d+) with admin-token`)
)

// Run runs the guard on one delivery and returns what it left behind.
func (s Step) Run(t testing.TB, d Delivery) Result {
	t.Helper()
	res, err := s.run(context.Background(), Binary(t), d)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func (s Step) run(ctx context.Context, bin string, d Delivery) (Result, error) {
	dir, env, err := s.prepare(d)
	if err != nil {
		return Result{}, err
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "action")
	cmd.Env = env
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		return Result{}, fmt.Errorf("actiontest: running gns-guard: %w", err)
	}
	return collect(dir, code, stdout.String(), stderr.String())
}

// environ is the step's environment: a clean one (nothing of the test
// process leaks in but PATH and HOME), as a container gets.
func (s Step) environ(d Delivery, event, output, summary string) ([]string, error) {
	env := map[string]string{
		"PATH":                os.Getenv("PATH"),
		"HOME":                os.TempDir(),
		"CI":                  "true",
		"GITHUB_ACTIONS":      "true",
		"GITEA_ACTIONS":       "true",
		"GITHUB_SERVER_URL":   s.Server.URL,
		"GITHUB_API_URL":      s.Server.URL + "/api/v1",
		"GITHUB_REPOSITORY":   s.Owner + "/" + s.Repo,
		"GITHUB_EVENT_NAME":   d.Event,
		"GITHUB_EVENT_PATH":   event,
		"GITHUB_SHA":          d.Commit,
		"GITHUB_RUN_ATTEMPT":  "1", // a re-run sets Env["GITHUB_RUN_ATTEMPT"]
		"GITHUB_OUTPUT":       output,
		"GITHUB_STEP_SUMMARY": summary,
		"GITHUB_WORKSPACE":    filepath.Dir(event),
		"RUNNER_TEMP":         filepath.Dir(event),
	}
	ins, err := Inputs()
	if err != nil {
		return nil, err
	}
	known := map[string]bool{}
	for _, in := range ins {
		known[in.Name] = true
		v := in.Default
		if v == "${{ github.token }}" {
			v = s.Token
		}
		if o, ok := s.Inputs[in.Name]; ok {
			v = o
		}
		env[InputEnv(in.Name)] = v
	}
	for name := range s.Inputs {
		if !known[name] {
			return nil, fmt.Errorf("actiontest: input %q is not declared in action.yml", name)
		}
	}
	anchor, err := s.anchor(d)
	if err != nil {
		return nil, err
	}
	env["GNS_GUARD_ANCHOR"] = anchor
	grants, err := s.variable("GNS_GUARD_BUDGET")
	if err != nil {
		return nil, err
	}
	env["GNS_GUARD_BUDGET"] = "grants:" + grants
	pins, err := s.variable("GNS_GUARD_LABELS")
	if err != nil {
		return nil, err
	}
	env["GNS_GUARD_LABELS"] = "labels:" + pins
	for k, v := range s.Env {
		env[k] = v
	}
	list := make([]string, 0, len(env))
	for k, v := range env {
		list = append(list, k+"="+v)
	}
	sort.Strings(list)
	return list, nil
}

// anchor is what action.yml's runs.env gives GNS_GUARD_ANCHOR when the
// runner picks the job up: the event's issue number, a colon, and the
// repository variable GNS_GUARD_ANCHOR_<number> as it is now ("" when
// there is none), or just the colon for an event with no issue.
func (s Step) anchor(d Delivery) (string, error) {
	if d.Number == 0 {
		return ":", nil
	}
	v, err := s.variable(fmt.Sprintf("GNS_GUARD_ANCHOR_%d", d.Number))
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%d:%s", d.Number, v), nil
}

// variable is the repository variable name as the runner reads it when it
// picks the job up ("" when there is none).
func (s Step) variable(name string) (string, error) {
	var v struct {
		Data string `json:"data"`
	}
	path := fmt.Sprintf("/repos/%s/%s/actions/variables/%s", url.PathEscape(s.Owner), url.PathEscape(s.Repo), name)
	err := API(context.Background(), s.Server, s.Server.AdminToken, http.MethodGet, path, nil, &v)
	if err != nil && !strings.Contains(err.Error(), "HTTP 404") {
		return "", fmt.Errorf("actiontest: reading the variable %s as the runner would: %w", name, err)
	}
	return v.Data, nil
}

// ParseOutputs reads a GITHUB_OUTPUT file: name=value lines and
// name<<DELIMITER heredocs. A name set twice is an error: an output
// injection would show as one.
func ParseOutputs(s string) (map[string]string, error) {
	out := map[string]string{}
	lines := strings.Split(s, "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSuffix(lines[i], "\r")
		if line == "" {
			continue
		}
		var name, value string
		if n, delim, ok := strings.Cut(line, "<<"); ok && !strings.Contains(n, "=") {
			name = n
			var vals []string
			closed := false
			for i++; i < len(lines); i++ {
				if strings.TrimSuffix(lines[i], "\r") == delim {
					closed = true
					break
				}
				vals = append(vals, lines[i])
			}
			if !closed {
				return nil, fmt.Errorf("actiontest: output %s: heredoc %s is not closed", name, delim)
			}
			value = strings.Join(vals, "\n")
		} else if n, v, ok := strings.Cut(line, "="); ok {
			name, value = n, v
		} else {
			return nil, fmt.Errorf("actiontest: output file line %d is neither name=value nor a heredoc: %q", i+1, line)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("actiontest: output %s is set twice", name)
		}
		out[name] = value
	}
	return out, nil
}

// Violation is one entry of the violations output, read as a workflow's
// next step would read it.
type Violation struct {
	Rule     string `json:"rule"`
	Severity string `json:"severity"`
	KeyPath  string `json:"key_path"`
	Line     int    `json:"line"`
	Col      int    `json:"col"`
	Message  string `json:"message"`
}

// Violations decodes the violations output, failing the test on error.
func (r Result) Violations(t testing.TB) []Violation {
	t.Helper()
	var vs []Violation
	DecodeJSON(t, r, "violations", &vs)
	return vs
}

// Rules lists the rules of the violations output, in order.
func (r Result) Rules(t testing.TB) []string {
	t.Helper()
	var out []string
	for _, v := range r.Violations(t) {
		out = append(out, v.Rule)
	}
	return out
}

// String shows the run as a failure message wants it: its stdout, stderr
// and outputs.
func (r Result) String() string {
	return fmt.Sprintf("stdout:\n%s\nstderr:\n%s\noutputs: %v", r.Stdout, r.Stderr, r.Outputs)
}

// DecodeJSON decodes an output holding JSON, failing the test on error.
func DecodeJSON(t testing.TB, r Result, name string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(r.Outputs[name]), v); err != nil {
		t.Fatalf("output %s = %q is not JSON: %v", name, r.Outputs[name], err)
	}
}
