// Package setup sets a repository up for the guard (`gns-guard init`)
// and checks how it is set up (`gns-guard doctor`).
//
// For init: the files it writes (the workflow, the settings, the issue
// template), the commit or pull request that carries them, the labels,
// the recommended posture (the agents' team, the default branch's
// protection), the steps left to do by hand, and the report as text or
// JSON. For doctor: the threat model's guarantees judged on the posture
// read, and the meter's scope and key.
//
// It reads what the repository holds first and writes only what is
// missing: a file or label already there is left as it is. It reaches
// the server through the roles of package port.
package setup
