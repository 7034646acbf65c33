package action_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/cli"
	"github.com/gns-guard/gns-guard/internal/markdown"
	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
)

// checkFindings runs `gns-guard check --format json` on a body, in process: the
// findings a person gets from the CLI for the same text.
func checkFindings(t *testing.T, body string) []actiontest.Violation {
	t.Helper()
	var out bytes.Buffer
	env := cli.System()
	env.Stdin, env.Stdout, env.Stderr = strings.NewReader(body), &out, io.Discard
	cli.Main(context.Background(), []string{"check", "--format", "json", "-"}, env) // exit 1: findings
	var rep struct {
		Findings []actiontest.Violation `json:"findings"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("check --format json: %v\n%s", err, out.String())
	}
	return rep.Findings
}

// row is how a finding shows in the guard's tables.
func row(v actiontest.Violation) string {
	return fmt.Sprintf("| ❌ | `%s` | %d:%d | %s |", v.Rule, v.Line, v.Col, markdown.Cell(v.Message, 600))
}

// checkpoint-invalid: the status comment lists every schema error with its
// line and column in the issue body, and the context-recovery-needed
// comment is posted once, however many runs see the broken checkpoint.
func TestCheckpointInvalid(t *testing.T) {
	f := newFakeFixture(t)
	n, d := f.Open(t, "broken", example(t, "broken.md"), "cascade::depth-1")
	body := f.Issue(t, n).Body
	want := checkFindings(t, body)
	if len(want) < 10 {
		t.Fatalf("expected the broken example to have at least 10 errors, check found %d", len(want))
	}
	r := f.Run(t, d)
	r.Expect(t, 1, "fail")
	got := r.Violations(t)
	if len(got) != len(want) {
		t.Errorf("the action found %d violations, check %d", len(got), len(want))
	}
	status := f.Status(t, n)
	for _, v := range want {
		if v.Rule != "checkpoint-invalid" {
			t.Errorf("unexpected finding %+v", v)
		}
		if !strings.Contains(status.Body, row(v)) {
			t.Errorf("the status comment lacks the row %s", row(v))
		}
		if line := fmt.Sprintf("issue#%d:%d:%d: %s [%s]", n, v.Line, v.Col, v.Message, v.Rule); !strings.Contains(r.Stdout, line+"\n") {
			t.Errorf("the log lacks %s", line)
		}
	}
	recovery := f.GuardComments(t, n, actiontest.RecoveryMarker(n))
	if len(recovery) != 1 || !strings.HasPrefix(recovery[0].Body, "## 🔄 context-recovery-needed") {
		t.Fatalf("expected one context-recovery-needed comment, found %d", len(recovery))
	}
	// An invalid checkpoint is never rewritten.
	if f.Issue(t, n).Body != body {
		t.Error("the guard rewrote a body it cannot trust")
	}

	// Another event on the same broken issue: still one recovery comment,
	// one status comment, and nothing written.
	_, d2 := f.Comment(t, n, f.Admin(), "Looking into it.")
	r = f.Run(t, d2)
	r.Expect(t, 1, "fail")
	if n := len(f.GuardComments(t, n, actiontest.RecoveryMarker(n))); n != 1 {
		t.Errorf("after two runs there are %d context-recovery-needed comments", n)
	}
	if got := f.Status(t, n); got.ID != status.ID {
		t.Errorf("a second status comment %d was posted beside %d", got.ID, status.ID)
	}
}

// checkpoint-ambiguous: two checkpoint blocks; which one is true cannot be
// known, so nothing is judged but that, and recovery is requested.
func TestCheckpointAmbiguous(t *testing.T) {
	f := newFakeFixture(t)
	n, d := f.Open(t, "two checkpoints", testdata(t, "err/ambiguous.md"), "cascade::depth-2", "size::medium")
	r := f.Run(t, d)
	r.Expect(t, 1, "fail")
	// One finding per block, each at its opening fence.
	r.ExpectRules(t, "checkpoint-ambiguous", "checkpoint-ambiguous")
	status := f.Status(t, n).Body
	for _, v := range r.Violations(t) {
		if !strings.Contains(status, row(v)) {
			t.Errorf("the status comment lacks %s", row(v))
		}
	}
	if vs := r.Violations(t); vs[0].Line != 3 || vs[1].Line != 26 {
		t.Errorf("the blocks open on lines 3 and 26, the findings say %d and %d", vs[0].Line, vs[1].Line)
	}
	if len(f.GuardComments(t, n, actiontest.RecoveryMarker(n))) != 1 {
		t.Error("no context-recovery-needed comment")
	}
}

// checkpoint-missing: a governed label and no checkpoint block.
func TestCheckpointMissing(t *testing.T) {
	f := newFakeFixture(t)
	n, d := f.Open(t, "no checkpoint", func(int64) string { return "The agents lost the checkpoint.\n" }, "cascade::depth-2")
	r := f.Run(t, d)
	r.Expect(t, 1, "fail")
	r.ExpectRules(t, "checkpoint-missing")
	if v := r.Violations(t)[0]; v.Line != 1 || v.Col != 1 {
		t.Errorf("violation %+v", v)
	}
	if !strings.Contains(f.Status(t, n).Body, "checkpoint-missing") || len(f.GuardComments(t, n, actiontest.RecoveryMarker(n))) != 1 {
		t.Error("expected the status comment and one context-recovery-needed comment")
	}
}

// context-pressure sets context::pressure-high, and the label goes when
// the next task shrinks; the status comment is resolved in place.
func TestContextPressureLabelComesAndGoes(t *testing.T) {
	f := newFakeFixture(t)
	n, d := f.Open(t, "heavy", testdata(t, "err/context-pressure.md"), "cascade::depth-2", "size::tiny")
	r := f.Run(t, d)
	r.Expect(t, 1, "fail")
	r.ExpectRules(t, "context-pressure")
	if v := r.Violations(t)[0]; !strings.Contains(v.Message, "of the 4000 a tiny task may use, over the pressure threshold of 60%") {
		t.Errorf("violation %+v", v)
	}
	if !f.Issue(t, n).Has("context::pressure-high") {
		t.Fatalf("context::pressure-high was not set\n%s", r.String())
	}
	status := f.Status(t, n)

	d = f.EditBody(t, n, f.Admin(), replace(t, f.Issue(t, n).Body, "next_estimated_tokens: 2400", "next_estimated_tokens: 600"))
	r = f.Run(t, d)
	r.Expect(t, 0, "pass")
	if f.Issue(t, n).Has("context::pressure-high") {
		t.Errorf("context::pressure-high stayed after the cause went away\n%s", r.String())
	}
	if got := f.Status(t, n); got.ID != status.ID || !strings.Contains(got.Body, "all clear") {
		t.Errorf("status comment %d (was %d):\n%s", got.ID, status.ID, got.Body)
	}
}
