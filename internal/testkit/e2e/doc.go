// Package e2e runs gns-guard end to end, the way a user meets it: a real
// Gitea 1.26 with Actions on, a real Gitea runner registered with it, and a
// repository whose workflow runs the guard on issue and comment events.
// People open issues, edit checkpoints, change labels and post agent
// comments through the API; the tests then read what anyone would see on the
// issue and in the Actions tab: run results, labels, the status comment,
// archive comments and the issue body.
//
// The runner runs jobs on the host (no Docker engine is assumed), so the
// workflow cannot start the action's container. It runs the binary the
// image holds instead, built the way the Dockerfile builds it, with the
// inputs passed exactly as the runner passes a Docker action's inputs:
// action.yml's defaults as INPUT_* variables and the image's arguments. The
// workflow is generated from action.yml, and a test keeps the generator and
// the example workflows honest against it.
//
// The tests need GNS_GUARD_INTEGRATION=1 (or CI set); see
// internal/testkit/giteatest.
package e2e
