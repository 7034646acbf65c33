// Package setup sets a repository up for the guard (`gns-guard init`):
// files, labels, the commit or pull request, the recommended posture (or,
// with --gated, the gated one) and the steps left by hand. It writes only
// what is missing.
//
// It also checks a posture (`gns-guard doctor`): the threat model's
// guarantees, the meter's scope and key, and the gated posture.
package setup
