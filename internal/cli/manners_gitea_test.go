package cli_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
)

// A report with a mistake a retry cannot fix exits 2 (agent.sh retries
// exit 3), names what is wrong, with no usage hint, and writes nothing: an
// issue or repository that does not exist, and a --consumed that would
// overflow the budget. A rejected token is named by where it came from.
func TestReportMistakesAreUsageErrors(t *testing.T) {
	t.Parallel()
	f := newFlow(t, 20000, "cascade::depth-2", "size::medium")
	done := []string{"--agent", "lead-developer", "--invocation", "inv-1", "--action", "did it"}
	repo := f.r.Owner + "/" + f.r.Name
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"missing issue", append([]string{"report", "--repo", repo, "--issue", "9999", "--server", f.r.S.URL, "--token", f.agent.Token, "--consumed", "10"}, done...),
			2, "report: issue #9999 does not exist in " + repo},
		{"missing repository", append([]string{"report", "--repo", f.r.Owner + "/no-such-repo", "--issue", "1", "--server", f.r.S.URL, "--token", f.agent.Token, "--consumed", "10"}, done...),
			2, "report: the repository " + f.r.Owner + "/no-such-repo does not exist on " + f.r.S.URL},
		{"rejected token", append([]string{"report", "--repo", repo, "--issue", "1", "--server", f.r.S.URL, "--token", "0123456789abcdef0123456789abcdef01234567", "--consumed", "10"}, done...),
			3, "rejected the token from --token (HTTP 401)"},
	}
	for _, c := range cases {
		_, stderr, code := gns(t, nil, c.args...)
		// The help would not fix any of these: no usage hint follows.
		if code != c.code || !strings.Contains(stderr, c.want) || strings.Contains(stderr, "for usage") {
			t.Errorf("%s: exit %d, stderr %q; want exit %d and %q, and no usage hint", c.name, code, stderr, c.code, c.want)
		}
	}

	if out, stderr, code := f.report(t, "--agent", "lead-developer", "--invocation", "inv-a", "--action", "began", "--consumed", "100", "--next-agent", "code-reviewer", "--next-estimate", "1000"); code != 0 {
		t.Fatalf("an honest report: exit %d\n%s%s", code, out, stderr)
	}
	f.guard(t)
	body := f.body(t)
	out, stderr, code := f.report(t, append([]string{"--consumed", "9223372036854775807"}, done...)...)
	if code != 2 || !strings.Contains(stderr, "report: --consumed 9223372036854775807") || !strings.Contains(stderr, "past the largest whole number") {
		t.Errorf("overflow: exit %d, stderr %q, stdout %s; want exit 2 naming --consumed", code, stderr, out)
	}
	if got := f.body(t); got != body {
		t.Errorf("a refused report changed the body:\n%s", got)
	}
}

// A checkpoint that reads as valid but was raised against the guard's
// ledger (what the guard fails as tampering, asking for a restore): recover
// proposes the accepted state, naming each field it restores, and keeps
// what honest reports added; applied, it satisfies the guard's ledger.
func TestRecoverRestoresATamperedCheckpoint(t *testing.T) {
	t.Parallel()
	f := newFlow(t, 20000, "cascade::depth-2", "size::medium")
	repo := f.r.Owner + "/" + f.r.Name
	if _, stderr, code := f.report(t, "--agent", "lead-developer", "--invocation", "inv-a", "--consumed", "1000", "--action", "step",
		"--next-agent", "code-reviewer", "--next-estimate", "2000"); code != 0 {
		t.Fatalf("report: %s", stderr)
	}
	f.guard(t)
	tampered := strings.Replace(strings.Replace(f.body(t), "    total: 20000\n", "    total: 90000\n", 1), "    remaining: 19000\n", "    remaining: 89000\n", 1)
	d := f.r.EditBody(t, f.n, f.agent, tampered)
	if res := f.r.Step().RunInProcess(t, d, actiontest.InProcess{}); res.Code != 1 || !strings.Contains(strings.Join(res.Rules(t), ","), "checkpoint-tampered") {
		t.Fatalf("the guard on the tampered body: %s", res)
	}
	f.guard(t)

	args := []string{"recover", "--repo", repo, "--issue", strconv.FormatInt(f.n, 10), "--server", f.r.S.URL, "--guard-user", f.r.Bot}
	text, stderr, code := gns(t, nil, append(args, "--token", f.agent.Token)...)
	if code != 0 || strings.Contains(text, "nothing to recover") {
		t.Fatalf("recover: exit %d\n%s%s", code, text, stderr)
	}
	for _, want := range []string{"the checkpoint is tampered", "with 2 fields restored", "| budget.total | 20000 |", "the body held 90000", "| budget.remaining | 19000 |", "the body held 89000"} {
		if !strings.Contains(text, want) {
			t.Errorf("recover's proposal lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "| budget.consumed |") {
		t.Errorf("consumed was not changed, yet restored:\n%s", text)
	}
	if _, stderr, code := gns(t, nil, append(args, "--token", f.r.S.AdminToken, "--apply")...); code != 0 {
		t.Fatalf("the admin's apply: exit %d %s", code, stderr)
	}
	body := f.body(t)
	if !strings.Contains(body, "    total: 20000\n    consumed: 1000\n    remaining: 19000\n") || !strings.Contains(body, "inv-a") {
		t.Errorf("the applied body:\n%s", body)
	}
	checkBody(t, body, f.n)
}
