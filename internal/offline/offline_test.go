package offline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

// input is the offline input of an example issue body.
func input(t *testing.T, example string) Input {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", "issues", example))
	if err != nil {
		t.Fatal(err)
	}
	return Input{Source: "b.md", Body: string(data), Config: config.Default(), Counter: &tokens.Counter{},
		Now: time.Date(2026, 5, 17, 8, 0, 0, 0, time.UTC)}
}

func TestCheck(t *testing.T) {
	rep := Check(input(t, "healthy.md"))
	var out, errOut strings.Builder
	rep.WriteText(&out, &errOut)
	if !rep.Valid || rep.Errors != 0 || errOut.Len() != 0 || !strings.HasPrefix(out.String(), "b.md: ok: issue ") {
		t.Errorf("healthy: %+v\n%s%s", rep, out.String(), errOut.String())
	}

	rep = Check(input(t, "broken.md"))
	out.Reset()
	rep.WriteText(&out, &errOut)
	if rep.Valid || rep.Errors == 0 || !strings.HasPrefix(errOut.String(), "b.md: ") || !strings.Contains(errOut.String(), " error") {
		t.Errorf("broken: %+v\n%s%s", rep, out.String(), errOut.String())
	}

	in := input(t, "healthy.md")
	in.Body = "no checkpoint here\n"
	rep = Check(in)
	if !rep.Valid || len(rep.Plan) != 0 || !strings.HasPrefix(rep.line, "not governed: ") {
		t.Errorf("not governed: %+v (%s)", rep, rep.line)
	}
}

// Prune agrees with the decision: a body over budget is pruned, a healthy
// one is not and says why, one with no checkpoint is refused.
func TestPrune(t *testing.T) {
	rep := Prune(input(t, "over-budget.md"))
	if !rep.Pruned || rep.Refused || len(rep.Archives) == 0 || !strings.HasPrefix(rep.Note(), "b.md: pruned (consumed 17400 > 80% of total 20000") ||
		!strings.Contains(rep.Text(), "--- archive part 1/") {
		t.Errorf("over budget: %s\n%+v", rep.Note(), rep)
	}

	in := input(t, "healthy.md")
	rep = Prune(in)
	if rep.Pruned || rep.Body != in.Body || rep.Text() != in.Body || rep.NewBudget != rep.Budget ||
		rep.Note() != "b.md: not pruned, the body is printed unchanged: "+rep.Reason || !strings.HasPrefix(rep.Reason, "no prune trigger fires: consumed 6200 <= 16000 (80% of total 20000)") {
		t.Errorf("healthy: %s\n%+v", rep.Note(), rep)
	}

	in.Body = "no checkpoint here\n"
	rep = Prune(in)
	if !rep.Refused || rep.Pruned || len(rep.Findings) != 1 || rep.Findings[0].Rule != checkpoint.RuleMissing ||
		rep.Note() != "b.md: the checkpoint is not valid; a body that cannot be trusted is never pruned" || !strings.HasPrefix(rep.Text(), "b.md:1:1: ") {
		t.Errorf("no checkpoint: %s\n%s%+v", rep.Note(), rep.Text(), rep)
	}
}

func TestExplain(t *testing.T) {
	for _, tc := range []struct {
		t    triggers
		want string
	}{
		{triggers{consumed: 100, total: 1000, remaining: 900, threshold: 0.8, tail: 2, entries: 5, tailLimit: 3, tokens: 400, overhead: -1},
			"no prune trigger fires: consumed 100 <= 800 (80% of total 1000); no history_tail (history holds 5 entries; history-tail 3); checkpoint 400 tokens, task size unknown"},
		{triggers{consumed: 900, total: 1000, remaining: 0, threshold: 0.8, tailSet: true, tail: 7, tailLimit: 3, tokens: 400, overhead: 300, size: "small"},
			"a prune trigger fires but the guard would write nothing: consumed 900 > 800 (80% of total 1000), but the budget is exhausted (remaining 0) and waits for a person; " +
				"history_tail 7 entries > 6, twice history-tail 3; checkpoint 400 tokens > 300 overhead of a small task"},
	} {
		if got := tc.t.explain(); got != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
	}
}
