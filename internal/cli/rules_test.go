package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/offline"
)

// TestRulesListsTheTable checks that `rules` prints every id of the rule
// table once, with its effects and inputs, in both formats.
func TestRulesListsTheTable(t *testing.T) {
	var out, errOut bytes.Buffer
	env := Env{Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }}
	if code := Main(context.Background(), []string{"rules", "--format", "json"}, env); code != 0 {
		t.Fatalf("rules --format json exited %d: %s", code, errOut.String())
	}
	var got []offline.Rule
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	table := guard.Rules()
	if len(got) != len(table) {
		t.Fatalf("%d rules printed, the table has %d", len(got), len(table))
	}
	seen := map[string]bool{}
	for i, r := range got {
		if r.ID != table[i].ID || r.When == "" || r.Effects == "" || seen[r.ID] {
			t.Errorf("rule %d: %+v", i, r)
		}
		seen[r.ID] = true
	}
	for _, id := range []string{guard.RuleDepthExceeded, guard.RuleTampered, guard.RuleProtectedPath, guard.RulePrune, "checkpoint-too-large", "history-tail-length"} {
		if !seen[id] {
			t.Errorf("rule %s is missing from the table", id)
		}
	}
	out.Reset()
	if code := Main(context.Background(), []string{"rules"}, env); code != 0 {
		t.Fatalf("rules exited %d", code)
	}
	if !strings.Contains(out.String(), "depth-exceeded (error; issues, issue_comment)\n  when:    depth > N of cascade::depth-N\n  effects: label cascade::depth-exceeded; lock; fail\n  inputs:  default-max-depth, admin-token\n") {
		t.Errorf("text form:\n%s", out.String())
	}
}

// check says "not governed" and exits 0 on a body with no checkpoint and no
// governed label, as the action would; with a governed label the missing
// block is a violation.
func TestCheckNotGoverned(t *testing.T) {
	var out, errOut bytes.Buffer
	env := Env{Stdin: strings.NewReader("# A question\n\nNo checkpoint here.\n"), Stdout: &out, Stderr: &errOut,
		Getenv: func(string) string { return "" }, Now: time.Now}
	if code := Main(context.Background(), []string{"check", "-"}, env); code != 0 || !strings.Contains(out.String(), "stdin: not governed") {
		t.Errorf("exit %d, out %q, err %q", code, out.String(), errOut.String())
	}
	out.Reset()
	env.Stdin = strings.NewReader("# A question\n\nNo checkpoint here.\n")
	if code := Main(context.Background(), []string{"check", "-", "--labels", "cascade::depth-2"}, env); code != 1 || !strings.Contains(out.String(), "[checkpoint-missing]") {
		t.Errorf("governed by its label: exit %d, out %q", code, out.String())
	}
}
