// Package dashboard sweeps a repository's open governed issues and judges
// each as the guard would (`gns-guard status`), renders the result as text,
// JSON or Markdown, and keeps the repository's one dashboard issue (`status
// --publish`, and the action's `mode: dashboard`).
//
// It reads through the one reader (package live) and the guard's own
// decision: it writes nothing to the issues it judges. Listing the open
// issues costs one request per 50; each governed issue costs what reading
// it costs the guard (one request when its status comment is among its
// last comments), and its issue is never read a second time.
package dashboard
