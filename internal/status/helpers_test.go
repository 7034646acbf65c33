package status

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

// The status comment is rendered from decisions: these build the issue the
// decision core's own tests judge (package guard's decide_test.go).

// written is when the test ledgers were written (server time).
var written = time.Date(2026, 5, 16, 13, 0, 0, 0, time.UTC)

var testKey = []byte("a ledger key only the guard's workflow can read")

func counter(t *testing.T) *tokens.Counter {
	t.Helper()
	c, err := tokens.New(tokens.CL100kBase)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// body builds an issue body around a checkpoint; edit rewrites lines of it.
func body(edits ...string) string {
	cp := `checkpoint:
  version: 2
  issue: 9
  phase: build
  depth: 1
  last_agent: dev
  last_invocation: inv-3
  budget:
    total: 10000
    consumed: 3000
    remaining: 7000
  state:
    labels: [cascade::depth-2]
    assignee: dev
  history_tail:
    - {agent: orchestrator, action: planned, timestamp: "2026-05-16T12:58:00Z"}
  next_agent: reviewer
  next_estimated_tokens: 1500
  created_at: "2026-05-16T12:50:00Z"
`
	for i := 0; i+1 < len(edits); i += 2 {
		cp = strings.Replace(cp, edits[i], edits[i+1], 1)
	}
	return "# Issue nine\n\nSome text.\n\n```yaml\n" + cp + "```\n"
}

func input(t *testing.T, b string, labels ...string) guard.Input {
	in := guard.Input{
		Config:  config.Default(),
		Issue:   issues.Issue{Number: 9, Body: b},
		Event:   issues.Event{Name: "issues", Action: "edited", Number: 9, Sender: "alice"},
		Self:    issues.ActionsUser,
		Now:     time.Date(2026, 5, 16, 14, 0, 0, 0, time.UTC),
		Counter: counter(t),
	}
	for i, l := range labels {
		in.Issue.Labels = append(in.Issue.Labels, issues.Label{ID: int64(i + 1), Name: l})
	}
	return in
}

func ruleIDs(p *guard.Plan) []string {
	var ids []string
	for _, v := range p.Violations {
		ids = append(ids, v.Rule)
	}
	slices.Sort(ids)
	return ids
}

// withLedger gives the input the guard's status comment carrying l, signed
// with the input's key, untouched since the guard wrote it.
func withLedger(in *guard.Input, l ledger.Record) {
	in.Status = &issues.Comment{ID: 50, Author: issues.ActionsUser, UpdatedAt: time.Unix(l.Written, 0),
		Body: issues.StatusMarker(in.Issue.Number) + "\n## ✅ gns-guard: all clear\n" + ledger.Encode(l, in.Config.LedgerKey) + "\n"}
	in.Recent = append(in.Recent, *in.Status)
}

// firstLedger is the guard's first run on the issue: its ledger, as the
// next run reads it.
func firstLedger(t *testing.T, in guard.Input) ledger.Record {
	t.Helper()
	p := guard.Decide(in)
	if len(p.Violations) != 0 || p.Ledger == nil || !p.Ledger.Baseline {
		t.Fatalf("first run: %v %+v", ruleIDs(p), p.Ledger)
	}
	l := *p.Ledger
	l.Written = written.Unix()
	return l
}

// agentResult is a result comment of agent dev for invocation inv whose
// footer claims consumed tokens, padded with n words of output.
func agentResult(id int64, inv string, consumed int64, words int) issues.Comment {
	footer := fmt.Sprintf(`<!-- GNS_EVENT {"agent":"dev","invocation":%q,"event_type":"subagent_result","phase":"build","depth":1,"budget":{"before":7000,"consumed":%d,"remaining":%d},"status":"done","verdict":"pass","files_changed":1,"key_stats":{"tests":3},"next_agent":"reviewer"} -->`, inv, consumed, 7000-consumed)
	text := strings.Repeat("the limiter refills tokens at a steady rate ", words/8)
	return issues.Comment{ID: id, Author: "dev", HTMLURL: fmt.Sprintf("https://gitea.example/o/r/issues/9#issuecomment-%d", id),
		Body: "## 🔄 dev | phase:build | depth:1\n\n" + text + "\n\n" + footer}
}

// onComment is the run for comment c, posted before the checkpoint is
// patched: the footer's claim is all there is.
func onComment(t *testing.T, c issues.Comment) guard.Input {
	in := input(t, body(), "cascade::depth-2")
	in.Event = issues.Event{Name: "issue_comment", Action: "created", Number: 9, Comment: &c}
	in.Recent = []issues.Comment{c}
	return in
}
