// Package agentwrite holds what an agent writes back to its issue: the
// exit protocol's result (Report) and the recovery of a broken checkpoint
// (Recover). Each reads the live issue, decides as the guard would, and
// writes in one issue transaction (package issuetx).
//
// The command line's report and recover verbs call it, and so will any
// other writer on an agent's behalf. It prints nothing: results carry
// their own text and JSON.
package agentwrite
