package handoff

import (
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

// TestPredictSignsAsTheGuardDoes: `report` holds no ledger-key, only the
// published ledger-public-key, under which the guard's signed record
// verifies. The guard's runs after the report sign what they write; the
// predicted runs sign with the stand-in report draws, so the record the
// first writes is not taken for a replaced one by the second. A clean
// report is predicted clean on every run, and a record an agent really
// replaced still fails.
func TestPredictSignsAsTheGuardDoes(t *testing.T) {
	counter, err := tokens.New(tokens.CL100kBase)
	if err != nil {
		t.Fatal(err)
	}
	secret := []byte("a12dd3a7fd3203a452eb34d91a9be20569d5e337a3384347068895c07f3e0c5a")
	cfg := config.Default()
	cfg.LedgerPublicKey = ledger.PublicKey(secret)
	cfg.LedgerStandIn = []byte("a key drawn for this prediction, 32 bytes or more of it")
	body := issueBody(t)
	iss := issues.Issue{Number: 42, Body: body, ContentVersion: 3}
	for i, l := range live {
		iss.Labels = append(iss.Labels, issues.Label{ID: int64(i + 1), Name: l})
	}
	l := ledger.Record{Issue: 42, Baseline: true, Version: 2, CheckpointIssue: 42, Phase: "implementation",
		Total: 20000, Consumed: 6200, Remaining: 13800, ContentVersion: 3, DepthLimit: "2", Size: "medium",
		Labels: iss.Labels, Pending: []string{}, Written: now.Add(-time.Minute).Unix()}
	predict := func(t *testing.T, record string) []*guard.Plan {
		t.Helper()
		status := &issues.Comment{ID: 5, Author: issues.ActionsUser, Body: "status " + issues.StatusMarker(42) + "\n" + record,
			UpdatedAt: now.Add(-time.Minute)}
		r := review()
		out, err := Apply(42, body, issues.NamesOf(iss.Labels), r, Options{HistoryTail: 3})
		if err != nil {
			t.Fatal(err)
		}
		in := guard.Input{Config: cfg, Issue: iss, Recent: []issues.Comment{*status}, Status: status, Self: issues.ActionsUser, Now: now, Counter: counter}
		_, after := Inputs(in, out, Comment(r, out), 0, "agent-bot", now)
		runs, err := Predict(after, now, func(in guard.Input) (*guard.Plan, error) { return decideNoAdmins(in), nil })
		if err != nil {
			t.Fatal(err)
		}
		return runs
	}

	runs := predict(t, ledger.Encode(l, secret))
	for i, p := range runs {
		if len(p.Violations) > 0 {
			t.Errorf("run %d of a clean report fails: %v", i+1, p.Violations)
		}
	}
	if len(runs) != PredictedRuns {
		t.Fatalf("%d runs predicted, want %d", len(runs), PredictedRuns)
	}
	if !runs[0].Governed || runs[0].Ledger == nil || runs[0].Ledger.Consumed != 6200+review().Consumed {
		t.Fatalf("the first run does not record the report's state: %+v", runs[0].Ledger)
	}

	// An unsigned record in the status comment as read is still a
	// replaced one.
	runs = predict(t, ledger.Encode(l, nil))
	if p := runs[0]; !slices.ContainsFunc(p.Violations, func(v guard.Violation) bool {
		return v.Rule == guard.RuleTampered && strings.Contains(v.Message, "not signed although ledger-key is set")
	}) {
		t.Errorf("an unsigned record under ledger-public-key was not judged replaced: %v", p.Violations)
	}
}
