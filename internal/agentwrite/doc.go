// Package agentwrite holds what an agent writes back to its issue:
// report's result and recover's checkpoint. Each reads the live issue,
// decides as the guard would, and writes in one issue transaction
// (package issuetx). It prints nothing; results render themselves.
package agentwrite
