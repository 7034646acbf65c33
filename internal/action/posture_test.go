package action_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// guardWorkflow is a workflow that runs the guard with the template's
// secrets, on an event no test causes: what the posture judges, not what
// records the tests' runs.
const guardWorkflow = `name: gns-guard
on: workflow_dispatch
jobs:
  guard:
    runs-on: ubuntu-latest
    steps:
      - uses: gnsadmin/gns-guard@v1
        with:
          ledger-key: ${{ secrets.GNS_GUARD_LEDGER_KEY }}
          admin-token: ${{ secrets.GNS_GUARD_ADMIN_TOKEN }}
`

// postureLine is the log line of a run that judged the posture itself.
var postureLine = regexp.MustCompile(`posture judged for commit (\S+): (\d+) of (\d+) check\(s\) do not hold \(read with (\d+) request\(s\), (\d+) of them with admin-token\)`)

// postureSpent is what the run's own posture check cost in requests: in
// all and those of admin-token; -1 when the run judged no posture itself.
func postureSpent(t *testing.T, r actiontest.Result) (all, admin int) {
	t.Helper()
	m := postureLine.FindStringSubmatch(r.Stdout)
	if m == nil {
		return -1, -1
	}
	all, err := strconv.Atoi(m[4])
	if err == nil {
		admin, err = strconv.Atoi(m[5])
	}
	if err != nil {
		t.Fatal(err)
	}
	return all, admin
}

// noPosture says the run judged no posture itself.
func noPosture(t *testing.T, r actiontest.Result) bool {
	all, _ := postureSpent(t, r)
	return all == -1
}

// postureWarnings are the posture warnings of a run's warnings output, by
// key path (the check's id).
func postureWarnings(t *testing.T, r actiontest.Result) map[string]string {
	t.Helper()
	var ws []struct {
		Rule     string `json:"rule"`
		KeyPath  string `json:"key_path"`
		Message  string `json:"message"`
		Severity string `json:"severity"`
	}
	if err := json.Unmarshal([]byte(r.Outputs["warnings"]), &ws); err != nil {
		t.Fatalf("the warnings output %q is not a JSON array: %v", r.Outputs["warnings"], err)
	}
	out := map[string]string{}
	for _, w := range ws {
		if w.Rule == "posture" {
			if w.Severity != "warning" {
				t.Errorf("posture finding %s has severity %q", w.KeyPath, w.Severity)
			}
			out[w.KeyPath] = w.Message
		}
	}
	return out
}

// issueWrites are the run's writes but the anchor's (admin-token's).
func issueWrites(r actiontest.Result) []string {
	var out []string
	for _, w := range r.Writes {
		if !strings.HasPrefix(w, "wrote the anchor") {
			out = append(out, w)
		}
	}
	return out
}

// The guard states the repository's posture once per default-branch
// commit. A write collaborator is named in the status comment and the step
// summary with what it can do (read the guard's secrets), as a warning,
// not a violation; a later run for the same commit reads no posture, so a
// clean pass stays at 2 requests; a new commit on the default branch
// checks again. Without admin-token the checks the token cannot make are
// said once, and the run passes all the same.
func TestPostureOncePerCommit(t *testing.T) {
	f := newFixture(t)
	mallory := f.User(t, "mallory", giteatest.PermWrite)
	f.CommitFile(t, ".gitea/workflows/gns-guard.yml", guardWorkflow)
	inputs := []string{"ledger-key", ledgerKey, "admin-token", f.S.AdminToken}

	n, d := f.Open(t, "posture", example(t, "healthy.md"), governed...)
	r := f.Run(t, d, inputs...)
	r.Expect(t, 0, "pass")
	spent, owner := postureSpent(t, r)
	if spent <= 0 {
		t.Fatalf("the first run for the commit judged no posture:\n%s", r.Stdout)
	}
	if r.Requests != firstRunRequests-postureRequests+spent-owner {
		t.Errorf("the first run made %d requests with the token, want %d and the posture's %d\n%s", r.Requests, firstRunRequests-postureRequests, spent-owner, r.Stdout)
	}
	t.Logf("the posture check of the first run for a commit: %d requests, %d of them with admin-token (a user's repository, 2 collaborators, 2 workflows)", spent, owner)
	ws := postureWarnings(t, r)
	code := ws["accounts.code-write"]
	for _, want := range []string{mallory.Login + " (write collaborator) can push code", "`GNS_GUARD_LEDGER_KEY` (the ledger key)", "`GNS_GUARD_ADMIN_TOKEN` (the owner's token)"} {
		if !strings.Contains(code, want) {
			t.Errorf("the accounts.code-write warning does not say %q: %q\n%s", want, code, r.Outputs["warnings"])
		}
	}
	if !strings.Contains(ws["accounts.actions-write"], mallory.Login) || ws["branch.status-check"] == "" {
		t.Errorf("posture warnings: %v", ws)
	}
	if _, ok := ws["posture.unchecked"]; ok {
		t.Errorf("with the owner's token every check is made, but the run says %q", ws["posture.unchecked"])
	}
	if r.Outputs["violations"] != "[]" {
		t.Errorf("a posture that does not hold is a warning, not a violation: %s", r.Outputs["violations"])
	}
	status := f.Status(t, n).Body
	for _, where := range []struct{ name, text string }{{"status comment", status}, {"step summary", r.Summary}} {
		if !strings.Contains(where.text, "`posture`") || !strings.Contains(where.text, mallory.Login+" (write collaborator) can push code") {
			t.Errorf("the %s does not name %s and what it can do:\n%s", where.name, mallory.Login, where.text)
		}
	}
	if !strings.Contains(status, "all clear") {
		t.Errorf("the posture made the issue look failed:\n%s", status)
	}

	// The same commit: the ledger's stamp stands in for the posture. (A
	// new comment moves the anchor admin-token keeps, a write of the
	// owner's token that the count of the guard's token leaves out.)
	_, d = f.Comment(t, n, f.Admin(), "a note from a person")
	r = f.Run(t, d, inputs...)
	r.Expect(t, 0, "pass")
	if r.Requests != 2 || len(issueWrites(r)) != 0 || !noPosture(t, r) || !strings.Contains(r.Stdout, "posture as the ledger recorded it") {
		t.Errorf("a clean pass for the same commit made %d requests and wrote %q; want 2, nothing, and the posture from the ledger\n%s", r.Requests, r.Writes, r.Stdout)
	}
	if got := postureWarnings(t, r); got["accounts.code-write"] != code {
		t.Errorf("the ledger's posture says %q, the first run said %q", got["accounts.code-write"], code)
	}
	if f.Status(t, n).Body != status {
		t.Error("the status comment changed on a clean pass")
	}

	// A new commit on the default branch: the posture is judged again,
	// and the status comment records the new stamp; the run after it
	// reads nothing again.
	f.CommitFile(t, "NOTES.md", "a note on the default branch\n")
	_, d = f.Comment(t, n, f.Admin(), "another note")
	r = f.Run(t, d, inputs...)
	r.Expect(t, 0, "pass")
	if m := postureLine.FindStringSubmatch(r.Stdout); m == nil || !strings.HasPrefix(d.Commit, m[1]) {
		t.Errorf("a run for the new commit %s did not judge the posture again:\n%s", d.Commit, r.Stdout)
	}
	if w := issueWrites(r); len(w) != 1 || !strings.HasPrefix(w[0], "updated the status comment") {
		t.Errorf("the new commit's stamp: writes %q, want the status comment", r.Writes)
	}
	r = f.Run(t, d, inputs...) // a re-run: the same commit, nothing new
	if r.Expect(t, 0, "pass"); r.Requests != 2 || len(r.Writes) != 0 || !noPosture(t, r) {
		t.Errorf("after the new commit's first run a clean pass made %d requests and wrote %q\n%s", r.Requests, r.Writes, r.Stdout)
	}

	// The guard's token alone (a write collaborator's): what only the
	// owner may read is said once, as could not check; the run passes.
	m, d := f.Open(t, "posture without the owner's token", example(t, "healthy.md"), governed...)
	r = f.Run(t, d, "ledger-key", ledgerKey)
	r.Expect(t, 0, "pass")
	ws = postureWarnings(t, r)
	unchecked := ws["posture.unchecked"]
	for _, want := range []string{"accounts.code-write, accounts.actions-write, accounts.admin: ", "secrets.present: ", "admin-token"} {
		if !strings.Contains(unchecked, want) {
			t.Errorf("the could-not-check warning does not say %q: %q", want, unchecked)
		}
	}
	if _, ok := ws["accounts.code-write"]; ok {
		t.Errorf("a check the token could not make is reported as made: %v", ws)
	}
	if st, _, _ := strings.Cut(f.Status(t, m).Body, "<!-- gns-guard:ledger"); strings.Count(st, "could not check") != 1 {
		t.Errorf("the status comment says \"could not check\" %d times, want once:\n%s", strings.Count(st, "could not check"), st)
	}
	spent, _ = postureSpent(t, r)
	t.Logf("the posture check with the guard's token alone: %d requests", spent)
}

// A posture read the server refuses (403) is said once, as could not
// check, and recorded with the commit: the next run for the commit reads
// nothing. A read that fails otherwise (503) is said too, and the next
// run tries again. Neither fails the run.
func TestPostureReadRefusedOrFailed(t *testing.T) {
	f := newFixture(t)
	target, err := url.Parse(f.S.URL)
	if err != nil {
		t.Fatal(err)
	}
	forward := httputil.NewSingleHostReverseProxy(target)
	var answer atomic.Int32 // the status the default branch's read gets; 0: the server's
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if code := int(answer.Load()); code != 0 && strings.Contains(r.URL.Path, "/branches/") {
			http.Error(w, http.StatusText(code), code)
			return
		}
		forward.ServeHTTP(w, r)
	}))
	t.Cleanup(proxy.Close)
	step := f.Step("ledger-key", ledgerKey)
	step.Env["GITHUB_API_URL"] = proxy.URL + "/api/v1"

	answer.Store(http.StatusForbidden)
	n, d := f.Open(t, "refused", example(t, "healthy.md"), governed...)
	r := step.Run(t, d)
	r.Expect(t, 0, "pass")
	if u := postureWarnings(t, r)["posture.unchecked"]; !strings.Contains(u, "posture.read: the guard's tokens may not read the repository's posture") || !strings.Contains(u, "admin-token") {
		t.Errorf("a refused read: %q\n%s", u, r.Stdout)
	}
	r = step.Run(t, d)
	if r.Expect(t, 0, "pass"); r.Requests != 2 || len(r.Writes) != 0 || !strings.Contains(r.Stdout, "posture as the ledger recorded it") {
		t.Errorf("after a refused read, the same commit's run made %d requests and wrote %q\n%s", r.Requests, r.Writes, r.Stdout)
	}
	if got := postureWarnings(t, r)["posture.unchecked"]; !strings.Contains(got, "may not read") {
		t.Errorf("the ledger's posture lost the refusal: %q", got)
	}
	if st, _, _ := strings.Cut(f.Status(t, n).Body, "<!-- gns-guard:ledger"); strings.Count(st, "could not check") != 1 {
		t.Errorf("the status comment does not say could not check once:\n%s", st)
	}

	answer.Store(http.StatusServiceUnavailable)
	m, d := f.Open(t, "failed", example(t, "healthy.md"), governed...)
	r = step.Run(t, d)
	r.Expect(t, 0, "pass")
	if u := postureWarnings(t, r)["posture.unchecked"]; !strings.Contains(u, "reading the repository's posture failed") || !strings.Contains(u, "the next run tries again") {
		t.Errorf("a failed read: %q\n%s", u, r.Stdout)
	}
	answer.Store(0)
	r = step.Run(t, d)
	r.Expect(t, 0, "pass")
	if all, _ := postureSpent(t, r); all <= 0 || strings.Contains(f.Status(t, m).Body, "tries again") {
		t.Errorf("the run after a failed read did not judge the posture again:\n%s", r.Stdout)
	}
}
