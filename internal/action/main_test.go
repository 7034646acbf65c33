package action_test

import (
	"testing"

	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// Which tests run where. What the shell decides and writes (findings,
// labels, comments, bodies, variables, their order, retries, exit codes,
// outputs) is tested in process on the fake Gitea: newFakeFixture
// (fake_fixture_test.go) and newFakeRepo (inprocess_fixture_test.go), fed
// the payloads Gitea's Actions notifier makes (fakeforge.Run). Every test
// not named below is one of those; `go test ./internal/action` runs them
// in seconds.
//
// The tests that start the real Gitea 1.26 (newFixture, giteatest.Require;
// GNS_GUARD_INTEGRATION=1) prove what only Gitea can:
//
//   - payloads a runner hands the step: TestProtectedPathOnEveryPullEvent
//     (every event of a pull request), TestHugeCommentIsAViolation and
//     TestHugeBodyIsAViolation (texts over the guard's read caps, in the
//     payload and the API's answers);
//   - permissions and access: TestAnchorAgentsCannotWrite (403 on a
//     variable), TestPostureOncePerCommit, TestPostureReadRefusedOrFailed,
//     TestPostureSeesAccessGivenWithoutACommit, TestWriterCannotSpeakAsAnotherAgent
//     (an organisation's teams), TestOutsiderCannotBlockAnIssue (an
//     outsider's comment of 2 MiB), TestTaskOnAPrivateRepository (no edit
//     history);
//   - the timeline: TestLabelRenameRelaxesNothing,
//     TestRenameBeforeTheRunIsAForgery, TestOrdinaryLabelRenamedIntoSize,
//     TestRenamedLabelOpensNoProtectedPath, TestPendingLabelSwappedByRenames
//     (a rename rewrites every entry), TestAnchorCatchesADeletionResetWithTheLabels
//     (a deleted label takes its entries along);
//   - what Gitea renders and sends: TestHiddenInstructionsDoNotReachTheLoad,
//     TestStripHoldsGiteasRendering, TestCompletionDigestNotifiesNobody;
//   - the real adapter's requests and errors: TestRequestsDoNotGrowWithComments
//     and TestRequestBudgetPerTimeline (paging, the cost of each
//     timeline), TestFirstRunCost (a first run's requests),
//     TestRejectedTokenExits3;
//   - the history, report and context verbs on the guard's comments:
//     TestHistoryDetectsTampering, TestFakeArchiveBeforePrune,
//     TestStatusMarkerInArchive, TestAcceptedResultsDoNotVanish,
//     TestTaskIsThePersons, TestOutsiderCannotSpeakAsTheReviewer. The
//     command line connects to a server by URL only, so these need one.
func TestMain(m *testing.M) { giteatest.Main(m) }
