// Package scopes is the one table of the Gitea tokens gns-guard needs, with
// each one's scopes, why, and the routes that ask for them (scopes.go), and
// each verb's share (verbs.go). init's next steps, refusal messages and the
// docs are made from it (render.go); a test holds the docs to it.
package scopes
