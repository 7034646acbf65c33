package containertest_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"github.com/gns-guard/gns-guard/internal/giteatest"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/containertest"
	"gopkg.in/yaml.v3"
)

// releaseTag is the tag the release workflow's script is run for.
const releaseTag = "v0.0.1-test"

// prebuiltRepo is the action repository whose action.yml says
// image: docker://<the released image>, as a release's v1 tag would.
const prebuiltRepo = "gns-guard-prebuilt"

var released struct {
	once  sync.Once
	image string // host/owner/gns-guard:tag
	out   string // the script's output
	took  time.Duration
	err   error
}

// releaseScript returns the run script of release.yml's push step.
func releaseScript(t testing.TB) string {
	t.Helper()
	root, err := containertest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, ".gitea", "workflows", "release.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		On   map[string]map[string][]string `yaml:"on"`
		Jobs map[string]struct {
			Steps []struct {
				Name string `yaml:"name"`
				Uses string `yaml:"uses"`
				Run  string `yaml:"run"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatalf("release.yml: %v", err)
	}
	if tags := wf.On["push"]["tags"]; len(tags) != 1 || tags[0] != "v*" {
		t.Errorf("release.yml runs on tags %v, want v*", tags)
	}
	var script string
	for _, j := range wf.Jobs {
		for _, st := range j.Steps {
			if strings.Contains(st.Run, "docker push") {
				script = st.Run
			}
		}
	}
	if script == "" {
		t.Fatal("release.yml has no step that pushes the image")
	}
	return script
}

// release runs release.yml's push step, as a runner would on the tag
// releaseTag, in a checkout of the project against the test server's
// container registry and the test engine, then pushes the project as
// prebuiltRepo with action.yml pinned to the image by .ci/pin-image and
// tagged v1. It returns the image.
func release(t testing.TB, w world) string {
	t.Helper()
	script := releaseScript(t)
	released.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		dir, err := os.MkdirTemp("", "gnsg-release-")
		if err != nil {
			released.err = err
			return
		}
		defer os.RemoveAll(dir)
		if released.err = containertest.CheckoutProject(ctx, dir); released.err != nil {
			return
		}
		cmd := exec.CommandContext(ctx, "bash", "-e", "-c", script)
		cmd.Dir = dir
		cmd.Env = append(w.e.Env(),
			"GITHUB_SERVER_URL="+w.s.URL,
			"GITHUB_REPOSITORY_OWNER="+w.s.AdminLogin,
			"GITHUB_REF_NAME="+releaseTag,
			"REGISTRY_TOKEN="+w.s.AdminToken,
			"REGISTRY_USER="+w.s.AdminLogin,
		)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		began := time.Now()
		err = cmd.Run()
		released.took, released.out = time.Since(began), out.String()
		if err != nil {
			released.err = fmt.Errorf("release.yml's push step: %w\n%s", err, out.String())
			return
		}
		host := strings.TrimPrefix(w.s.URL, "http://")
		released.image = host + "/" + strings.ToLower(w.s.AdminLogin) + "/gns-guard:" + releaseTag
		_, released.err = containertest.PushEditedProject(ctx, w.s, w.s.AdminLogin, prebuiltRepo, func(dir string) error {
			pin := exec.CommandContext(ctx, "bash", filepath.Join(dir, ".ci", "pin-image"), released.image)
			if b, err := pin.CombinedOutput(); err != nil {
				return fmt.Errorf(".ci/pin-image: %w: %s", err, b)
			}
			return nil
		}, "v1")
	})
	if released.err != nil {
		t.Fatal(released.err)
	}
	return released.image
}

// TestReleaseImage runs the release workflow's push against the test
// server's container registry, then checks that anyone can pull the image
// and that a workflow using the pinned action.yml runs the pulled image
// without building anything.
func TestReleaseImage(t *testing.T) {
	w := requireWorld(t)
	image := release(t, w)
	t.Logf("release.yml's push step (build and push %s): %s", image, released.took.Round(100*time.Millisecond))
	if !strings.Contains(released.out, "pushed "+image) {
		t.Errorf("the push step does not say it pushed %s:\n%s", image, released.out)
	}
	if strings.Contains(released.out, w.s.AdminToken) {
		t.Error("the push step printed the registry token")
	}

	// The package is on the server, under the owner.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var pkg struct {
		Name    string `json:"name"`
		Version string `json:"version"`
		Type    string `json:"type"`
	}
	if err := w.s.API(ctx, w.s.AdminToken, http.MethodGet, "/packages/"+w.s.AdminLogin+"/container/gns-guard/"+releaseTag, nil, &pkg); err != nil {
		t.Fatalf("the server has no container package gns-guard %s: %v", releaseTag, err)
	}

	// Pulled afresh by a logged-in engine. (Gitea 1.26's registry answers
	// an anonymous pull with a Basic challenge beside the Bearer one, and
	// Docker Engine 20.10 then gives up with "no basic auth credentials":
	// runners log in, see the README.)
	if err := w.e.RemoveImagesExcept(ctx); err != nil {
		t.Fatal(err)
	}
	host := strings.TrimPrefix(w.s.URL, "http://")
	if _, err := w.e.Docker(ctx, strings.NewReader(w.s.AdminToken), "login", host, "--username", w.s.AdminLogin, "--password-stdin"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.e.Docker(ctx, nil, "pull", image); err != nil {
		t.Fatalf("pulling the released image: %v", err)
	}
	if _, err := w.e.Docker(ctx, nil, "logout", host); err != nil {
		t.Fatal(err)
	}
	if err := w.e.RemoveImagesExcept(ctx); err != nil {
		t.Fatal(err)
	}
	runnerLogin(t, w)

	// A workflow using the pinned action pulls the image and runs it.
	r := w.newRepo(t, guardWorkflow(w.s.AdminLogin+"/"+prebuiltRepo+"@v1", w.tokens.url, map[string]string{"default-max-depth": "2", "pressure-threshold": "0.9"}, nil))
	r.openIssue(1, "Rate limiting", example(t, "healthy.md", 1))
	runs := r.waitRuns(1, 1)
	log := r.jobLog(runs[0])
	if runs[0].Conclusion != "success" {
		t.Errorf("the run with the prebuilt image, want success:\n%s\n%s", giteatest.RunList(runs), log)
	}
	if _, err := w.e.Docker(ctx, nil, "image", "inspect", image); err != nil {
		t.Errorf("the runner did not pull the released image: %v", err)
	}
	if strings.Contains(log, "docker build") {
		t.Errorf("the runner built an image, though action.yml names a prebuilt one:\n%s", log)
	}
	wantLine(t, log, "outputs: result=pass ", "the pulled image ran the guard")
}

// runnerLogin logs the runner's user in to the server's registry, as
// `docker login` on the runner's machine would: the runner reads
// $HOME/.docker/config.json when it pulls an action's image.
func runnerLogin(t testing.TB, w world) {
	t.Helper()
	dir := filepath.Join(w.runner.WorkDir, "home", ".docker")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	host := strings.TrimPrefix(w.s.URL, "http://")
	auth := base64.StdEncoding.EncodeToString([]byte(w.s.AdminLogin + ":" + w.s.AdminToken))
	cfg := fmt.Sprintf(`{"auths":{%q:{"auth":%q}}}`, host, auth)
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
}
