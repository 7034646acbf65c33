// Package testkit holds what the tests share and the product never imports:
// the real Gitea and runner (giteatest), the binary run on recorded Actions
// payloads (actiontest), a private container engine (containertest), the
// end-to-end and fault suites (e2e, faulttest), the one in-memory fake
// of the server the unit tests use (fakeforge) and golden-file comparison
// (golden). This package itself only finds the source tree.
package testkit
