// Package access answers "may this login write this repository's issues?"
// (docs/ledger.md#who-can-write): yes when the server's list of writers
// (the repository's assignees) names it, or it owns the repository. The
// agents setting then says which agents a writer may speak as. It is pure.
package access
