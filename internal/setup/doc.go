// Package setup sets a repository up for the guard (`gns-guard init`):
// files, labels, the commit or pull request, the recommended posture and
// the steps left by hand. It writes only what is missing.
//
// It also checks a posture (`gns-guard doctor`): the threat model's
// guarantees, and the meter's scope and key.
package setup
