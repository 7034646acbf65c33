// Package scopes holds the one table of the access tokens a person
// creates for gns-guard on Gitea 1.26 — the guard's own account's, the
// repository owner's, an agent's, init's — with the scopes each needs,
// what each scope is for and the routes of Gitea that ask for it
// (scopes.go), and each verb's share of them (verbs.go). init's next
// steps, the messages of a refused token and the docs (render.go) are
// made from it; a test holds README.md and docs/ to it.
package scopes
