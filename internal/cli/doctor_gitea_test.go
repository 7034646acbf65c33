package cli_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// postureRepo is a repository on the real Gitea whose posture the tests
// build and judge, driven as the server's administrator.
type postureRepo struct {
	t           *testing.T
	s           *giteatest.Server
	owner, name string
}

func (r *postureRepo) full() string { return r.owner + "/" + r.name }

// call sends a request with token to path (under /api/v1) and returns the
// error, if any.
func (r *postureRepo) call(token, method, path string, in, out any) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return r.s.API(ctx, token, method, path, in, out)
}

func (r *postureRepo) must(method, path string, in, out any) {
	r.t.Helper()
	if err := r.call(r.s.AdminToken, method, path, in, out); err != nil {
		r.t.Fatal(err)
	}
}

func (r *postureRepo) path(format string, args ...any) string {
	return "/repos/" + url.PathEscape(r.owner) + "/" + url.PathEscape(r.name) + fmt.Sprintf(format, args...)
}

func (r *postureRepo) putFile(path string, content []byte) {
	r.t.Helper()
	r.must(http.MethodPost, r.path("/contents/%s", path), map[string]any{
		"content": base64.StdEncoding.EncodeToString(content), "message": "Add " + path, "branch": "main"}, nil)
}

func (r *postureRepo) setSecret(name, value string) {
	r.t.Helper()
	r.must(http.MethodPut, r.path("/actions/secrets/%s", name), map[string]any{"data": value}, nil)
}

// newUser creates a user with a name unique on the server and returns
// its login and token.
func newUser(t *testing.T, s *giteatest.Server, base string) (string, string) {
	t.Helper()
	login := fmt.Sprintf("%s%d", base, time.Now().UnixNano()%1e9)
	tok, err := s.NewUser(context.Background(), login, false)
	if err != nil {
		t.Fatal(err)
	}
	return login, tok
}

// newOrgRepo creates an organisation (its owner the administrator) and a
// repository of it with a README on main.
func newOrgRepo(t *testing.T) *postureRepo {
	t.Helper()
	s := giteatest.Require(t)
	_, name := s.NewRepo(t) // a unique name; the organisation holds its namesake
	org := fmt.Sprintf("org%d", time.Now().UnixNano()%1e9)
	r := &postureRepo{t: t, s: s, owner: org, name: name}
	r.must(http.MethodPost, "/orgs", map[string]any{"username": org, "visibility": "public"}, nil)
	r.must(http.MethodPost, "/orgs/"+org+"/repos", map[string]any{"name": name, "auto_init": true, "default_branch": "main", "readme": "Default"}, nil)
	return r
}

// doctor runs `gns-guard doctor` on the repository as the administrator,
// the repository's owner's token given as --admin-token.
func (r *postureRepo) doctor(args ...string) (string, string, int) {
	r.t.Helper()
	base := []string{"doctor", "--repo", r.full(), "--server", r.s.URL, "--token", r.s.AdminToken, "--admin-token", r.s.AdminToken}
	return gns(r.t, nil, append(base, args...)...)
}

type doctorCheck struct {
	ID     string   `json:"id"`
	Holds  bool     `json:"holds"`
	Why    string   `json:"why"`
	Logins []string `json:"logins"`
}

func (r *postureRepo) doctorJSON() ([]doctorCheck, int) {
	r.t.Helper()
	stdout, stderr, code := r.doctor("--format", "json")
	var checks []doctorCheck
	if err := json.Unmarshal([]byte(stdout), &checks); err != nil {
		r.t.Fatalf("doctor --format json: exit %d, %v\n%s%s", code, err, stdout, stderr)
	}
	return checks, code
}

func readExample(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile("../../" + path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDoctorPassesThePostureInitBuilds builds an organisation repository
// in the recommended posture as `init --commit` leaves it (the agents'
// team, the workflow, main protected with the guard's check required),
// sets the secrets and publishes the public key as init's next steps say,
// and checks that Gitea refuses the agent what the threat model says it
// cannot do — push a branch, disable the guard's workflow, re-run its
// runs, read the secrets — and that doctor exits 0, twice alike, and 4
// with a token that cannot read everything.
func TestDoctorPassesThePostureInitBuilds(t *testing.T) {
	t.Parallel()
	r := newOrgRepo(t)
	agent, agentToken := newUser(t, r.s, "mallory")
	bot, _ := newUser(t, r.s, "gnsbot")
	key := strings.TrimSpace(mustGns(t, "keygen"))
	pub := strings.TrimSpace(mustGnsEnv(t, map[string]string{"GNS_GUARD_LEDGER_KEY": key}, "pubkey"))
	r.putFile(".gitea/gns-guard.yml", []byte("protected-paths: [.kilo/]\nledger-public-key: "+pub+"\n"))

	stdout, stderr, code := gns(t, nil, "init", "--repo", r.full(), "--server", r.s.URL, "--token", r.s.AdminToken, "--commit", "--agents", agent+","+bot)
	if code != 0 || strings.Contains(stdout, "to do by hand") {
		t.Fatalf("init: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"create the team gns-agents in " + r.owner + " (Code read, Issues and Pull requests write, Actions read): done",
		"add " + agent + " to the team gns-agents: done",
		"protect main: no pushes, and merging waits for `gns-guard / guard (pull_request_target)`: done",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("init's output lacks %q:\n%s", want, stdout)
		}
	}
	r.setSecret("GNS_GUARD_LEDGER_KEY", key)
	r.setSecret("GNS_GUARD_ADMIN_TOKEN", r.s.AdminToken)
	r.setSecret("GNS_GUARD_TOKEN", "the guard's own token")

	first, _, code := r.doctor()
	if code != 0 {
		t.Fatalf("doctor on the posture init built: exit %d, want 0\n%s", code, first)
	}
	if again, _, _ := r.doctor(); again != first {
		t.Errorf("doctor answered twice differently:\n%s\n---\n%s", first, again)
	}
	// With an agent's token alone, what only the owner may read could not
	// be checked: its own state, and exit 4, every check made holding.
	text, stderr, code := gns(t, nil, "doctor", "--repo", r.full(), "--server", r.s.URL, "--token", agentToken)
	if code != 4 || !strings.Contains(text, "could not check") || strings.Contains(text, "BROKEN") || !strings.Contains(text, "could not be checked with the tokens given") {
		t.Errorf("doctor with the agent's token: exit %d, want 4\n%s%s", code, text, stderr)
	}

	// What the agent's token is refused (HTTP 403), as the threat model says.
	var issue struct{ Number int64 }
	r.must(http.MethodPost, r.path("/issues"), map[string]any{"title": "a task", "body": "work"}, &issue)
	var runs struct {
		WorkflowRuns []struct{ ID int64 } `json:"workflow_runs"`
	}
	for deadline := time.Now().Add(30 * time.Second); len(runs.WorkflowRuns) == 0; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("opening an issue recorded no run of the guard's workflow")
		}
		r.must(http.MethodGet, r.path("/actions/runs"), nil, &runs)
	}
	refused := []struct {
		what, method, path string
		in                 any
	}{
		{"push a branch", http.MethodPost, r.path("/contents/.gitea/workflows/lint.yml"), map[string]any{
			"content": base64.StdEncoding.EncodeToString([]byte("on: push\njobs: {}\n")), "new_branch": "lint", "message": "lint"}},
		{"disable the guard's workflow", http.MethodPut, r.path("/actions/workflows/gns-guard.yml/disable"), nil},
		{"re-run the guard's run", http.MethodPost, r.path("/actions/runs/%d/rerun", runs.WorkflowRuns[0].ID), nil},
		{"list the secrets", http.MethodGet, r.path("/actions/secrets"), nil},
	}
	for _, c := range refused {
		err := r.call(agentToken, c.method, c.path, c.in, nil)
		if err == nil || !strings.Contains(err.Error(), "HTTP 403") {
			t.Errorf("the agent could %s: %v", c.what, err)
		}
	}
	// What the agent may do: write the issue.
	if err := r.call(agentToken, http.MethodPost, r.path("/issues/%d/comments", issue.Number), map[string]any{"body": "on it"}, nil); err != nil {
		t.Errorf("the agent cannot comment: %v", err)
	}
}

// TestDoctorNamesWhoBreaksAWeakRepository: in a repository whose agents
// are write collaborators, doctor exits 1 and names each account and what
// it can do; a repository that does not exist is a usage error.
func TestDoctorNamesWhoBreaksAWeakRepository(t *testing.T) {
	t.Parallel()
	s := giteatest.Require(t)
	owner, name := s.NewRepo(t)
	r := &postureRepo{t: t, s: s, owner: owner, name: name}
	writer, _ := newUser(t, s, "eve")
	admin, _ := newUser(t, s, "bob")
	ctx := context.Background()
	if err := s.AddCollaborator(ctx, owner, name, writer, giteatest.PermWrite); err != nil {
		t.Fatal(err)
	}
	if err := s.AddCollaborator(ctx, owner, name, admin, giteatest.PermAdmin); err != nil {
		t.Fatal(err)
	}
	old := strings.Replace(string(readExample(t, "examples/workflows/gns-guard.yml")), "\n  pull_request_target:\n", "\n  pull_request:\n", 1)
	r.putFile(".gitea/workflows/gns-guard.yml", []byte(old))

	checks, code := r.doctorJSON()
	if code != 1 {
		t.Fatalf("doctor: exit %d, want 1: %+v", code, checks)
	}
	want := map[string][]string{
		"accounts.code-write":    {admin, writer},
		"accounts.actions-write": {admin, writer},
		"accounts.admin":         {admin},
	}
	got := map[string]doctorCheck{}
	for _, c := range checks {
		got[c.ID] = c
	}
	for id, logins := range want {
		c := got[id]
		if c.Holds || fmt.Sprint(c.Logins) != fmt.Sprint(logins) {
			t.Errorf("%s: holds %v, logins %v; want broken by %v (%s)", id, c.Holds, c.Logins, logins, c.Why)
		}
	}
	for _, c := range []struct{ id, why string }{
		{"accounts.code-write", writer + " (write collaborator) can push code: a workflow on any branch reads `GNS_GUARD_ADMIN_TOKEN` (the owner's token) and `GNS_GUARD_LEDGER_KEY` (the ledger key)"},
		{"accounts.actions-write", writer + " (write collaborator) can write Actions: can disable the guard's workflow, and re-run and delete its runs"},
		{"workflow.pull-request-target", "runs the workflow of the pull request's own head"},
		{"branch.status-check", "main is not protected"},
		{"secrets.present", "the repository has no secret"},
		{"config.public-key", "publishes no ledger-public-key"},
	} {
		if g := got[c.id]; g.Holds || !strings.Contains(g.Why, c.why) {
			t.Errorf("%s: holds %v, why %q; want it broken, saying %q", c.id, g.Holds, g.Why, c.why)
		}
	}
	text, _, _ := r.doctor()
	if !strings.Contains(text, "BROKEN  accounts.code-write") || !strings.Contains(text, "of 12 guarantees do not hold") {
		t.Errorf("doctor's text:\n%s", text)
	}

	missing := &postureRepo{t: t, s: s, owner: owner, name: name + "-missing"}
	if _, stderr, code := missing.doctor(); code != 2 || !strings.Contains(stderr, "does not exist") {
		t.Errorf("doctor on a missing repository: exit %d, %s; want 2", code, stderr)
	}
}

func mustGns(t *testing.T, args ...string) string { return mustGnsEnv(t, nil, args...) }

func mustGnsEnv(t *testing.T, vars map[string]string, args ...string) string {
	t.Helper()
	stdout, stderr, code := gns(t, vars, args...)
	if code != 0 {
		t.Fatalf("gns-guard %v: exit %d\n%s%s", args, code, stdout, stderr)
	}
	return stdout
}
