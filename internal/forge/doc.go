// Package forge is the Gitea adapter: it implements every role of the
// port (package port) on top of the Gitea SDK (code.gitea.io/sdk/gitea),
// and sends the few requests the SDK cannot express (compare-and-swap body
// edits, content_version reads, the paged timeline) directly, through the
// same HTTP client.
//
// Every request goes through one counting RoundTripper (see Requests), so
// tests can hold the adapter to its request budget. It owns HTTP and error
// classification, and no decision. Only the command line (package cli)
// wires it; everything else reaches the server through the port.
package forge
