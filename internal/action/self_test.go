package action_test

import (
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/action"
	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
)

// A personal token that is also exported as GITEA_TOKEN and GITHUB_TOKEN
// (as a workflow may do for other steps) is not the Actions token: the
// guard still knows its own user, finds its own status comment, and skips
// the events its own writes cause, instead of posting a status comment per
// run, each starting another run.
func TestPersonalTokenExportedAsGiteaToken(t *testing.T) {
	f := newFakeFixture(t)
	step := f.Step("ledger-key", ledgerKey)
	step.Env["GITEA_TOKEN"] = f.Token
	step.Env["GITHUB_TOKEN"] = f.Token
	n, d := f.Open(t, "exported token", example(t, "depth-exceeded.md"), "cascade::depth-2", "size::medium")
	step.Run(t, d).Expect(t, 1, "fail")
	// The guard's own label change records a run (a personal token's
	// writes start runs): it is skipped as the guard's own event.
	own := f.Runs.Next(t, actiontest.From("issues", "label_updated", n, f.Bot))
	r := step.Run(t, own)
	r.Expect(t, 0, "skipped")
	if !strings.Contains(r.Stdout, "caused by the guard's own user") || len(r.Writes) != 0 {
		t.Errorf("the guard's own event was not skipped:\n%s", r.String())
	}
	// Three more runs on the issue: still one status comment.
	for range 3 {
		step.Run(t, d).Expect(t, 1, "fail")
	}
	if cs := f.GuardComments(t, n, actiontest.StatusMarker(n)); len(cs) != 1 {
		t.Errorf("%d status comments, want 1", len(cs))
	}
}

// With ledger-key set, a personal token's clean pass costs two requests,
// as the Actions token's does: the guard's user is the signed writer of
// its own ledger, so no GET /user asks. Without the key it must ask.
func TestPersonalTokenCleanPassWithLedgerKey(t *testing.T) {
	f := newFakeFixture(t)
	n := ledgered(t, f, "personal token")
	_, d := f.Comment(t, n, f.Admin(), "Looks good.")
	r := f.Run(t, d, "ledger-key", ledgerKey)
	r.Expect(t, 0, "pass")
	if r.Requests != 2 || len(r.Writes) != 0 {
		t.Errorf("a clean pass with ledger-key made %d requests and wrote %q; want 2 and nothing\n%s", r.Requests, r.Writes, r.String())
	}
	// Without the key nothing proves who wrote the record: GET /user.
	// (The first run without it rewrites the status comment, which says
	// the ledger is no longer signed.)
	f.Run(t, d).Expect(t, 0, "pass")
	r = f.Run(t, d)
	r.Expect(t, 0, "pass")
	if r.Requests != cleanPassRequests || len(r.Writes) != 0 {
		t.Errorf("without ledger-key a clean pass made %d requests, want %d (GET /user included)", r.Requests, cleanPassRequests)
	}
}

// A workflow whose token input names a secret that is not set (the
// template's GNS_GUARD_TOKEN) hands the step an empty token: the guard
// works with the Actions token action.yml hands it, as the Actions token.
func TestEmptyTokenInputFallsBackToTheActionsToken(t *testing.T) {
	f := newFakeFixture(t)
	step := f.Step("ledger-key", ledgerKey, "token", "")
	step.Env[action.ActionsTokenEnv] = f.Token
	_, d := f.Open(t, "no guard token", example(t, "healthy.md"), "cascade::depth-2", "size::medium")
	step.Run(t, d).Expect(t, 0, "pass")
}
