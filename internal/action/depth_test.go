package action_test

import (
	"strconv"
	"strings"
	"testing"
)

// depth-exceeded with an admin-token: the label is created and set, the
// issue locked, one status comment posted. A re-run of the same event
// changes nothing; fixing the depth removes the label and resolves the same
// status comment in place.
func TestDepthExceededLabelsLocksAndResolves(t *testing.T) {
	f := newFakeFixture(t)
	n, d := f.Open(t, "too deep", example(t, "depth-exceeded.md"), "cascade::depth-2", "size::medium", "phase::implementation")
	body := f.Issue(t, n).Body
	line, col := lineOf(t, body, "  depth: ")

	r := f.Run(t, d, "admin-token", f.Admin().Token)
	r.Expect(t, 1, "fail")
	r.ExpectRules(t, "depth-exceeded")
	v := r.Violations(t)[0]
	if v.Line != line || v.Col != col || v.KeyPath != "checkpoint.depth" || !strings.Contains(v.Message, "depth 3 is over the cascade limit of 2") {
		t.Errorf("violation %+v, expected checkpoint.depth at %d:%d", v, line, col)
	}
	if r.Outputs["depth"] != "3" || r.Outputs["max-depth"] != "2" {
		t.Errorf("depth %q, max-depth %q", r.Outputs["depth"], r.Outputs["max-depth"])
	}
	st := f.Issue(t, n)
	if !st.Has("cascade::depth-exceeded") || !st.Locked {
		t.Fatalf("expected the label cascade::depth-exceeded and a locked issue, got labels %v, locked %v\n%s", st.LabelNames(), st.Locked, r.String())
	}
	if color, _ := f.RepoLabel(t, "cascade::depth-exceeded"); color != "b60205" {
		t.Errorf("the created label has color %q, expected b60205", color)
	}
	status := f.Status(t, n)
	for _, s := range []string{"❌ gns-guard: 1 violation(s)", "`depth-exceeded`", "| " + strconv.Itoa(line) + ":" + strconv.Itoa(col) + " |", "depth 3 is over the cascade limit of 2"} {
		if !strings.Contains(status.Body, s) {
			t.Errorf("the status comment lacks %q:\n%s", s, status.Body)
		}
	}
	if !strings.Contains(r.Summary, "| `depth-exceeded` | ❌ fail |") {
		t.Errorf("the step summary does not fail depth-exceeded:\n%s", r.Summary)
	}

	// The same event again (a re-run of the job): nothing to write, and
	// the cost of a clean pass: the issue is already labelled and locked,
	// and the status comment already says it. admin-token is the owner's,
	// so the guard keeps an anchor: the run follows it (the issue, the
	// comments since) and the anchor names the guard's comment, whose
	// author is the guard's user — no GET /user.
	r = f.Run(t, d, "admin-token", f.Admin().Token)
	r.Expect(t, 1, "fail")
	if len(r.Writes) != 0 || r.Requests != 2 || !strings.Contains(r.Stdout, "through its anchor") {
		t.Errorf("a re-run on an unchanged issue wrote %q with %d requests (expected none, with 2, following the anchor)\n%s", r.Writes, r.Requests, r.Stdout)
	}

	// A person fixes the depth: the label goes, the status comment (the
	// same one) says all clear. The lock stays: a person unlocks.
	fixed := replace(t, body, "  depth: 3", "  depth: 1", "agent_chain: [orchestrator, lead-developer, developer, tester]", "agent_chain: [orchestrator, lead-developer]")
	d = f.EditBody(t, n, f.Admin(), fixed)
	r = f.Run(t, d, "admin-token", f.Admin().Token)
	r.Expect(t, 0, "pass")
	st = f.Issue(t, n)
	if st.Has("cascade::depth-exceeded") {
		t.Errorf("the label cascade::depth-exceeded stayed after the depth was fixed: %v\n%s", st.LabelNames(), r.String())
	}
	resolved := f.Status(t, n)
	if resolved.ID != status.ID || !strings.Contains(resolved.Body, "all clear") || strings.Contains(resolved.Body, "❌") {
		t.Errorf("expected status comment %d resolved in place, got %d:\n%s", status.ID, resolved.ID, resolved.Body)
	}
	if !contains(r.Writes, "removed label: cascade::depth-exceeded") || !contains(r.Writes, "updated the status comment") {
		t.Errorf("writes: %q", r.Writes)
	}
}

// Without an admin-token, the write token cannot lock: the refusal is
// reported in the status comment and the summary, the run fails for the
// violation (exit 1, not 3), and a re-run does not try the lock again.
func TestDepthExceededWithoutAdminTokenReportsTheRefusedLock(t *testing.T) {
	f := newFakeFixture(t)
	n, d := f.Open(t, "too deep", example(t, "depth-exceeded.md"), "cascade::depth-2", "size::medium", "phase::implementation")
	r := f.Run(t, d)
	r.Expect(t, 1, "fail")
	r.ExpectRules(t, "depth-exceeded")
	st := f.Issue(t, n)
	if st.Locked || !st.Has("cascade::depth-exceeded") {
		t.Errorf("locked %v, labels %v", st.Locked, st.LabelNames())
	}
	status := f.Status(t, n)
	for where, text := range map[string]string{"status comment": status.Body, "step summary": r.Summary} {
		if !strings.Contains(text, "could not be locked") || !strings.Contains(text, "admin-token") {
			t.Errorf("the %s does not report the refused lock:\n%s", where, text)
		}
	}
	r = f.Run(t, d)
	r.Expect(t, 1, "fail")
	if len(r.Writes) != 0 || r.Requests != cleanPassRequests {
		t.Errorf("the re-run wrote %q with %d requests\n%s", r.Writes, r.Requests, r.Stdout)
	}
	if got := f.Status(t, n); got.ID != status.ID || got.Body != status.Body {
		t.Errorf("the status comment changed on a re-run:\n%s", got.Body)
	}
}

// The cascade labels: two are a conflict, none is a violation unless
// default-max-depth gives the limit.
func TestCascadeLabels(t *testing.T) {
	f := newFakeFixture(t)
	n, d := f.Open(t, "two limits", example(t, "healthy.md"), "cascade::depth-1", "cascade::depth-2", "size::medium")
	r := f.Run(t, d)
	r.Expect(t, 1, "fail")
	r.ExpectRules(t, "cascade-label-conflict")
	if v := r.Violations(t)[0]; !strings.Contains(v.Message, "cascade::depth-1, cascade::depth-2") {
		t.Errorf("the conflict does not name both labels: %s", v.Message)
	}
	if !strings.Contains(f.Status(t, n).Body, "cascade-label-conflict") {
		t.Error("the status comment does not name cascade-label-conflict")
	}

	n, d = f.Open(t, "no limit", example(t, "healthy.md"), "size::medium")
	r = f.Run(t, d)
	r.Expect(t, 1, "fail")
	r.ExpectRules(t, "cascade-label-missing")
	if r.Outputs["max-depth"] != "" {
		t.Errorf("max-depth = %q with no limit known", r.Outputs["max-depth"])
	}
	if !strings.Contains(f.Status(t, n).Body, "default-max-depth") {
		t.Error("the status comment does not say how to give the limit (a label or default-max-depth)")
	}

	// default-max-depth gives the limit of an issue without a label.
	n2, d2 := f.Open(t, "default limit", example(t, "healthy.md"), "size::medium")
	r = f.Run(t, d2, "default-max-depth", "2")
	r.Expect(t, 0, "pass")
	if r.Outputs["max-depth"] != "2" || !ledgerAndHint(r.Writes) {
		t.Errorf("max-depth %q, writes %q (expected the ledger and the read hint only)", r.Outputs["max-depth"], r.Writes)
	}
	r = f.Run(t, d2, "default-max-depth", "n")
	r.Expect(t, 0, "pass")
	if r.Outputs["max-depth"] != "n" {
		t.Errorf("max-depth %q for n", r.Outputs["max-depth"])
	}
	r = f.Run(t, d2, "default-max-depth", "0")
	r.Expect(t, 1, "fail")
	r.ExpectRules(t, "depth-exceeded")
	if !f.Issue(t, n2).Has("cascade::depth-exceeded") {
		t.Error("depth 1 over default-max-depth 0 did not set cascade::depth-exceeded")
	}
}

func contains(lines []string, prefix string) bool {
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}
