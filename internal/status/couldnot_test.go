package status

import (
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
)

// A run stopped by a configuration error edits the status comment to say
// so: never "all clear", the ledger record kept byte for byte, the error
// made inert; an issue with no status comment gets none.
func TestCouldNotJudge(t *testing.T) {
	record := ledger.Encode(ledger.Record{Issue: 9, Baseline: true, Version: 2, CheckpointIssue: 9, Total: 100, Remaining: 100, Writer: issues.ActionsUser, Written: written.Unix()}, testKey)
	existing := &issues.Comment{ID: 50, Author: issues.ActionsUser, Body: issues.StatusMarker(9) + "\n## ✅ gns-guard: all clear\n\nNo violations.\n" + record + "\n"}
	why := ".gitea/gns-guard.yml:3:1: @alice | `x`: unknown key"
	body, ok := CouldNotJudge(9, existing, why)
	if !ok {
		t.Fatal("no comment to edit")
	}
	if strings.Contains(body, "all clear") || !strings.Contains(body, "## ⚠️ gns-guard: could not judge this issue") || !strings.HasPrefix(body, issues.StatusMarker(9)+"\n") {
		t.Errorf("the comment does not say the issue could not be judged:\n%s", body)
	}
	if ledger.Line(body) != record {
		t.Errorf("the ledger record changed:\n%s\nwant\n%s", ledger.Line(body), record)
	}
	if l, problem := ledger.Read(&issues.Comment{Author: issues.ActionsUser, Body: body}, 9, ledger.SecretKeys(testKey)); l == nil || problem != "" {
		t.Errorf("the record no longer verifies: %s", problem)
	}
	if !strings.Contains(body, "**Why**: .gitea/gns-guard.yml:3:1: &#64;alice \\| &#96;x&#96;: unknown key") {
		t.Errorf("the error is not shown inert:\n%s", body)
	}
	if _, ok := CouldNotJudge(9, nil, why); ok {
		t.Error("a status comment would be created")
	}
}
