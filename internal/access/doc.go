// Package access holds the one answer to "may this login write this
// repository's issues?" (docs/ledger.md#who-can-write): a login is a
// writer when the server's list of writers names it (Gitea's assignees
// of the repository), or when it owns the repository. The agents setting
// then says which agents a writer may speak as. The guard's live reader
// and the meter both ask it. It is pure: the shell reads the list.
package access
