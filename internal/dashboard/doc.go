// Package dashboard judges a repository's open governed issues as the guard
// would (`gns-guard status`), renders text, JSON or Markdown, and keeps the
// one dashboard issue. It reads through package live and writes nothing to
// the issues: a request per 50 listed, and per issue what the guard's read
// costs.
package dashboard
