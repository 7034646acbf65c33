package status

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/testkit/golden"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
)

// TestStatusGolden renders the sticky status comment and the step summary
// of every issue body in testdata/status (labels: the checkpoint's own
// state.labels) and compares them with NAME.status.md and NAME.summary.md.
// Adding a case is adding a body; -update writes its goldens.
func TestStatusGolden(t *testing.T) {
	cases, err := filepath.Glob("../../testdata/status/*.md")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, path := range cases {
		if strings.HasSuffix(path, ".status.md") || strings.HasSuffix(path, ".summary.md") {
			continue
		}
		n++
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			in := input(t, string(data))
			in.Config.LedgerKey = testKey
			parsed := checkpoint.Parse(in.Issue.Body, checkpoint.Options{})
			if cp := parsed.Checkpoint; cp != nil {
				in.Issue.Number = cp.Issue.Value
				for i, l := range cp.State.Labels.Items {
					in.Issue.Labels = append(in.Issue.Labels, issues.Label{ID: int64(i + 1), Name: l.Value})
				}
			}
			p := guard.Decide(in)
			stem := strings.TrimSuffix(path, ".md")
			a := Applied{Written: written}
			if p.Ledger != nil {
				l := *p.Ledger
				l.Written = written.Unix()
				a.Record = ledger.Encode(l, testKey)
			}
			const rerun = "go test ./internal/status -run TestStatusGolden -update"
			golden.Check(t, stem+".status.md", Stable(in, p, nil, a), rerun)
			golden.Check(t, stem+".summary.md", Summary(in.Issue.Number, p, in.Config, nil), rerun)
		})
	}
	if n == 0 {
		t.Fatal("no cases in testdata/status")
	}
}
