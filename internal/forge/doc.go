// Package forge is the Gitea adapter: every role of package port, on the
// Gitea SDK, with direct requests where the SDK falls short
// (compare-and-swap edits, content_version, the paged timeline). One
// counting RoundTripper sees every request (Requests), so tests hold it to
// its budget. It decides nothing; only the command line and the binary
// wire it.
package forge
