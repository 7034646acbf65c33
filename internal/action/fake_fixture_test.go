package action_test

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/action"
	"github.com/gns-guard/gns-guard/internal/cli"
	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/port"
	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
	"github.com/gns-guard/gns-guard/internal/testkit/fakeforge"
	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// fakeFixture is actiontest.Repo on the fake Gitea: the same people, the
// same helpers, the runs the fake records for their events (Gitea's
// Actions payloads, fakeforge.Run), and the guard run in process. A test
// of what the guard decides and writes runs on it in milliseconds; what
// only Gitea can show stays on actiontest.Repo.
type fakeFixture struct {
	S *fakeforge.Server
	// Owner and Name name the repository.
	Owner, Name string
	// Runs are the runs the fake records for the tests' events.
	Runs *fakeRuns
	// Bot is the guard's login and Token its personal token, as
	// actiontest.Repo's: a collaborator with write access.
	Bot, Token string
	clock      time.Time
	users      int
}

// The fake fixture's people: the repository's owner (who opens the
// issues, and whose token is admin-token) and the guard's user.
const (
	fakeOwner      = "admin"
	fakeOwnerToken = "the-owner-token"
	fakeBotToken   = "the-guard-token"
)

// newFakeFixture starts a parallel test on a fake repository of its own.
func newFakeFixture(t *testing.T) *fakeFixture {
	t.Helper()
	t.Parallel()
	f := &fakeFixture{S: fakeforge.New(fakeOwner + "/proj"), Owner: fakeOwner, Name: "proj", Bot: "guard", Token: fakeBotToken,
		clock: time.Now().UTC().Truncate(time.Second)}
	f.Runs = &fakeRuns{s: f.S}
	f.S.Now = func() time.Time { return f.clock }
	f.S.EditHistory = true // a public repository
	f.S.Token(fakeOwnerToken, fakeOwner)
	f.S.Token(fakeBotToken, f.Bot)
	f.S.Grant(f.Bot, "write")
	return f
}

// tick is a second passing, between one action and the next. The clock
// starts at the wall clock's, as the real server's does.
func (f *fakeFixture) tick() { f.clock = f.clock.Add(time.Second) }

// Variable is the repository's Actions variable name ("" when there is
// none).
func (f *fakeFixture) Variable(t testing.TB, name string) string { return f.S.Variables()[name] }

// Guard is the guard's user, with the token it runs with.
func (f *fakeFixture) Guard() actiontest.User { return actiontest.User{Login: f.Bot, Token: f.Token} }

// Admin is the repository's owner, who opens the tests' issues.
func (f *fakeFixture) Admin() actiontest.User {
	return actiontest.User{Login: fakeOwner, Token: fakeOwnerToken}
}

// User is a collaborator with permission perm (read, write or admin).
func (f *fakeFixture) User(t testing.TB, prefix string, perm giteatest.Permission) actiontest.User {
	f.users++
	u := actiontest.User{Login: fmt.Sprintf("%s-%d", prefix, f.users)}
	u.Token = "the-token-of-" + u.Login
	f.S.Token(u.Token, u.Login)
	f.S.Grant(u.Login, string(perm))
	return u
}

// fakeRuns hands out the runs the fake recorded, as actiontest.Runs
// hands out the real server's.
type fakeRuns struct {
	s       *fakeforge.Server
	taken   int // the runs read from the server
	pending []actiontest.Delivery
}

// poll reads the runs recorded since the last poll.
func (r *fakeRuns) poll() {
	all := r.s.Runs()
	for i, run := range all[r.taken:] {
		event := run.Event
		if event == "pull_request" {
			event = "pull_request_target" // the `on:` of examples/workflows/gns-guard.yml
		}
		r.pending = append(r.pending, actiontest.Delivery{Event: event, Type: run.Event, Action: run.Action, Number: run.Number,
			Sender: run.Sender, TriggerUser: run.Sender, Run: int64(r.taken + i + 1), Commit: run.Commit, Payload: run.Payload})
	}
	r.taken = len(all)
}

// Next takes the first recorded run not yet taken that match accepts.
func (r *fakeRuns) Next(t testing.TB, match func(actiontest.Delivery) bool) actiontest.Delivery {
	t.Helper()
	r.poll()
	for i, d := range r.pending {
		if match == nil || match(d) {
			r.pending = slices.Delete(r.pending, i, i+1)
			return d
		}
	}
	t.Fatalf("no matching run recorded; recorded, not taken: %v", r.pending)
	return actiontest.Delivery{}
}

// Open opens an issue as the owner with body(n) and labels, and returns
// its number and the "opened" run.
func (f *fakeFixture) Open(t testing.TB, title string, body func(int64) string, labels ...string) (int64, actiontest.Delivery) {
	t.Helper()
	return f.OpenAs(t, f.Admin(), title, body, labels...)
}

// OpenAs opens an issue as the user, and returns its number and the
// "opened" run.
func (f *fakeFixture) OpenAs(t testing.TB, as actiontest.User, title string, body func(int64) string, labels ...string) (int64, actiontest.Delivery) {
	t.Helper()
	f.tick()
	is := issues.Issue{Number: 1, Title: title}
	for f.S.Issue(is.Number).Number != 0 {
		is.Number++
	}
	is.Body = body(is.Number)
	for _, l := range labels {
		is.Labels = append(is.Labels, issues.Label{Name: l})
	}
	n := f.S.OpenIssue(is, as.Login)
	return n, f.Runs.Next(t, actiontest.From("issues", "opened", n, as.Login))
}

// OpenPull commits files on a new branch and opens a pull request from it
// as the owner, as actiontest's openPull does.
func (f *fakeFixture) OpenPull(t testing.TB, branch string, files ...string) (int64, actiontest.Delivery) {
	t.Helper()
	f.tick()
	for _, path := range files {
		f.S.Files(branch)[path] = []byte("# " + path + "\n")
	}
	n := f.S.OpenPull(issues.Issue{Title: "change " + branch}, fakeOwner, branch, files)
	return n, f.Runs.Next(t, actiontest.From("pull_request_target", "opened", n, fakeOwner))
}

// Issue is issue n as a person reads it.
func (f *fakeFixture) Issue(t testing.TB, n int64) actiontest.Issue {
	t.Helper()
	is := f.S.Issue(n)
	out := actiontest.Issue{Number: is.Number, Title: is.Title, Body: is.Body, Locked: is.Locked, Comments: is.Comments, ContentVersion: is.ContentVersion}
	for _, l := range is.Labels {
		out.Labels = append(out.Labels, struct {
			Name string `json:"name"`
		}{l.Name})
	}
	return out
}

// RepoLabel is a repository label's color (ok false when absent).
func (f *fakeFixture) RepoLabel(t testing.TB, name string) (color string, ok bool) {
	for _, l := range f.S.Labels() {
		if l.Name == name {
			return l.Color, true
		}
	}
	return "", false
}

// CommitFile writes a file to the default branch as the owner, creating
// it or replacing what it held: a new commit, which runs of later events
// carry as GITHUB_SHA.
func (f *fakeFixture) CommitFile(t testing.TB, path, content string) {
	t.Helper()
	f.tick()
	c := f.S.Dial(fakeOwnerToken)
	change := port.FileChange{Path: path, Content: []byte(content)}
	if old, err := c.FileAt(t.Context(), "", path, 1<<20); err == nil {
		change.SHA = old.SHA
	}
	if _, err := c.CommitFiles(t.Context(), port.Commit{Message: "Set " + path, Files: []port.FileChange{change}}); err != nil {
		t.Fatal(err)
	}
}

// Comments are issue n's comments, oldest first.
func (f *fakeFixture) Comments(t testing.TB, n int64) []actiontest.Comment {
	var out []actiontest.Comment
	for _, c := range f.S.Comments(n) {
		ac := actiontest.Comment{ID: c.ID, Body: c.Body, HTMLURL: c.HTMLURL}
		ac.User.Login = c.Author
		out = append(out, ac)
	}
	return out
}

// GuardComments are the guard's own comments that hold marker.
func (f *fakeFixture) GuardComments(t testing.TB, n int64, marker string) []actiontest.Comment {
	var out []actiontest.Comment
	for _, c := range f.Comments(t, n) {
		if c.User.Login == f.Bot && strings.Contains(c.Body, marker) {
			out = append(out, c)
		}
	}
	return out
}

// Status is the status comment, failing unless there is exactly one.
func (f *fakeFixture) Status(t testing.TB, n int64) actiontest.Comment {
	t.Helper()
	cs := f.GuardComments(t, n, actiontest.StatusMarker(n))
	if len(cs) != 1 {
		t.Fatalf("expected exactly one status comment on #%d, found %d", n, len(cs))
	}
	return cs[0]
}

// Comment posts a comment on issue n as the user and returns its id and
// the run it recorded.
func (f *fakeFixture) Comment(t testing.TB, n int64, as actiontest.User, body string) (int64, actiontest.Delivery) {
	t.Helper()
	f.tick()
	c, err := f.S.Dial(as.Token).CreateComment(context.Background(), n, body)
	if err != nil {
		t.Fatal(err)
	}
	return c.ID, f.Runs.Next(t, actiontest.From("issue_comment", "created", n, as.Login))
}

// EditComment replaces comment id's body as the user and returns the run
// it recorded on issue n.
func (f *fakeFixture) EditComment(t testing.TB, n, id int64, as actiontest.User, body string) actiontest.Delivery {
	t.Helper()
	f.tick()
	if _, err := f.S.Dial(as.Token).EditComment(context.Background(), id, body); err != nil {
		t.Fatal(err)
	}
	return f.Runs.Next(t, actiontest.From("issue_comment", "edited", n, as.Login))
}

// EditBody replaces issue n's body as the user and returns the run the
// edit recorded.
func (f *fakeFixture) EditBody(t testing.TB, n int64, as actiontest.User, body string) actiontest.Delivery {
	t.Helper()
	f.tick()
	if _, err := f.S.Dial(as.Token).EditIssue(context.Background(), n, port.IssueEdit{Body: &body}); err != nil {
		t.Fatal(err)
	}
	return f.Runs.Next(t, actiontest.From("issues", "edited", n, as.Login))
}

// AddLabels adds labels (created when missing) to issue n as the owner
// and returns the run it recorded.
func (f *fakeFixture) AddLabels(t testing.TB, event string, n int64, names ...string) actiontest.Delivery {
	t.Helper()
	return f.addLabels(t, event, n, f.Admin(), names...)
}

// AddLabelsAs adds labels to issue n as the user and returns the run it
// recorded.
func (f *fakeFixture) AddLabelsAs(t testing.TB, n int64, as actiontest.User, names ...string) actiontest.Delivery {
	t.Helper()
	return f.addLabels(t, "issues", n, as, names...)
}

func (f *fakeFixture) addLabels(t testing.TB, event string, n int64, as actiontest.User, names ...string) actiontest.Delivery {
	t.Helper()
	f.tick()
	if err := f.S.Dial(as.Token).AddLabels(context.Background(), n, names, nil); err != nil {
		t.Fatal(err)
	}
	return f.Runs.Next(t, actiontest.From(event, "label_updated", n, as.Login))
}

// RemoveLabel removes one label from issue n as the owner and returns the
// run it recorded.
func (f *fakeFixture) RemoveLabel(t testing.TB, n int64, name string) actiontest.Delivery {
	t.Helper()
	return f.RemoveLabelAs(t, n, f.Admin(), name)
}

// RemoveLabelAs removes one label from issue n as the user and returns
// the run it recorded.
func (f *fakeFixture) RemoveLabelAs(t testing.TB, n int64, as actiontest.User, name string) actiontest.Delivery {
	t.Helper()
	f.tick()
	if err := f.S.Dial(as.Token).RemoveLabel(context.Background(), n, issues.Label{Name: name}); err != nil {
		t.Fatal(err)
	}
	return f.Runs.Next(t, actiontest.From("issues", "label_updated", n, as.Login))
}

// DeleteComment deletes comment id as the user: it records no run.
func (f *fakeFixture) DeleteComment(t testing.TB, id int64, as actiontest.User) {
	t.Helper()
	f.tick()
	if err := f.S.Dial(as.Token).DeleteComment(context.Background(), id); err != nil {
		t.Fatal(err)
	}
}

// LastComments are the last k comments of issue n.
func (f *fakeFixture) LastComments(t testing.TB, n int64, k int) []actiontest.Comment {
	cs := f.Comments(t, n)
	return cs[max(0, len(cs)-k):]
}

// Outsider is a user with no role in the repository: on a public
// repository it may still open issues and comment on them.
func (f *fakeFixture) Outsider(t testing.TB, prefix string) actiontest.User {
	return f.User(t, prefix, giteatest.PermRead)
}

// fakeStep is the guard's step with its inputs, and environment
// variables set over the runner's.
type fakeStep struct {
	f      *fakeFixture
	inputs []string
	Env    map[string]string
	// Forge, when set, connects instead of the fake: the binary's
	// adapter, say, aimed at an address where nothing answers.
	Forge action.ForgeFunc
}

// Step is the guard step with the given inputs (name, value pairs).
func (f *fakeFixture) Step(inputs ...string) fakeStep {
	return fakeStep{f: f, inputs: inputs, Env: map[string]string{}}
}

// Run runs the step on a run's payload.
func (s fakeStep) Run(t testing.TB, d actiontest.Delivery) actiontest.Result {
	t.Helper()
	return s.f.run(t, d, s.Env, s.Forge, s.inputs...)
}

// Run runs the guard on a run's payload with the inputs (name, value
// pairs), in process, with the step's environment as actiontest.Step
// gives it.
func (f *fakeFixture) Run(t testing.TB, d actiontest.Delivery, inputs ...string) actiontest.Result {
	t.Helper()
	return f.RunWith(t, d, nil, inputs...)
}

// RunWith is Run with environment variables set over the step's.
func (f *fakeFixture) RunWith(t testing.TB, d actiontest.Delivery, env map[string]string, inputs ...string) actiontest.Result {
	t.Helper()
	return f.run(t, d, env, nil, inputs...)
}

// run is RunWith connecting through connect (nil: to the fake).
func (f *fakeFixture) run(t testing.TB, d actiontest.Delivery, env map[string]string, connect action.ForgeFunc, inputs ...string) actiontest.Result {
	t.Helper()
	f.tick()
	if connect == nil {
		connect = func(apiURL, token, o, name string) (port.Forge, error) {
			if apiURL != fakeforge.URL+"/api/v1" || o+"/"+name != f.S.Repo() {
				return nil, fmt.Errorf("no repository %s/%s at %s", o, name, apiURL)
			}
			return f.S.Dial(token), nil
		}
	}
	dir := t.TempDir()
	vars, err := f.environ(d, dir, inputs)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range env {
		vars[k] = v
	}
	if err := os.WriteFile(vars["GITHUB_EVENT_PATH"], d.Payload, 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	err = action.Run(context.Background(), action.Options{
		Getenv:     func(k string) string { return vars[k] },
		Stdout:     &stdout,
		Stderr:     &stderr,
		ReadFile:   os.ReadFile,
		AppendFile: cli.System().AppendFile,
		NewForge:   connect,
		Now:        func() time.Time { return f.clock },
	})
	res := actiontest.Result{Code: exitcode.Code(err), Stdout: stdout.String(), Stderr: stderr.String(), Requests: -1}
	out, _ := os.ReadFile(vars["GITHUB_OUTPUT"])
	if res.Outputs, err = actiontest.ParseOutputs(string(out)); err != nil {
		t.Fatalf("%v\nstdout:\n%s", err, res.Stdout)
	}
	sum, _ := os.ReadFile(vars["GITHUB_STEP_SUMMARY"])
	res.Summary = string(sum)
	res.ReadLog()
	return res
}

// environ is the step's environment as actiontest.Step makes it: the
// inputs over action.yml's defaults (the token input the guard's token),
// the event, and what action.yml hands over from the repository
// variables (the anchor, the grant list, the label pins).
func (f *fakeFixture) environ(d actiontest.Delivery, dir string, inputs []string) (map[string]string, error) {
	vars := map[string]string{
		"CI": "true", "GITHUB_ACTIONS": "true", "GITEA_ACTIONS": "true",
		"GITHUB_SERVER_URL": fakeforge.URL, "GITHUB_API_URL": fakeforge.URL + "/api/v1",
		"GITHUB_REPOSITORY": f.S.Repo(), "GITHUB_EVENT_NAME": d.Event, "GITHUB_EVENT_PATH": filepath.Join(dir, "event.json"),
		"GITHUB_SHA": cmp.Or(d.Commit, "c0ffee0000000000000000000000000000000000"), "GITHUB_RUN_ATTEMPT": "1",
		"GITHUB_OUTPUT": filepath.Join(dir, "output"), "GITHUB_STEP_SUMMARY": filepath.Join(dir, "summary"),
		"GITHUB_WORKSPACE": dir, "RUNNER_TEMP": dir,
	}
	ins, err := actiontest.Inputs()
	if err != nil {
		return nil, err
	}
	for _, in := range ins {
		v := in.Default
		if v == "${{ github.token }}" {
			v = f.Token
		}
		vars[actiontest.InputEnv(in.Name)] = v
	}
	for i := 0; i+1 < len(inputs); i += 2 {
		if _, ok := vars[actiontest.InputEnv(inputs[i])]; !ok {
			return nil, fmt.Errorf("input %q is not declared in action.yml", inputs[i])
		}
		vars[actiontest.InputEnv(inputs[i])] = inputs[i+1]
	}
	held := f.S.Variables()
	vars[action.AnchorEnv] = ":"
	if d.Number != 0 {
		vars[action.AnchorEnv] = fmt.Sprintf("%d:%s", d.Number, held[ledger.AnchorName(d.Number)])
	}
	vars[action.GrantsEnv] = "grants:" + held[ledger.GrantsName]
	vars[action.PinsEnv] = "labels:" + held[ledger.PinsName]
	return vars, nil
}
