package scopes

import "slices"

// Verb is what a server-reading verb needs of its token.
type Verb struct {
	Name   string
	Scopes []string
	// Flag needs Adds too, and Also ("an approver's account").
	Flag string
	Adds []string
	Also string
}

// AgentVerbs are the verbs an agent runs, measured on Gitea 1.26 by
// TestAgentTokenScopes: each of Scopes is needed, and they suffice.
// Agent's scopes are their union.
var AgentVerbs = []Verb{
	{Name: "context", Scopes: []string{"read:issue", "read:repository"}},
	{Name: "report", Scopes: []string{"write:issue", "read:repository", "read:user"}},
	{Name: "recover", Scopes: []string{"read:issue", "read:repository"}, Flag: "--apply", Adds: []string{"write:issue", "read:user"},
		Also: "an approver's account"},
	{Name: "history", Scopes: []string{"read:issue"}},
	{Name: "status", Scopes: []string{"read:issue", "read:repository"}, Flag: "--publish", Adds: []string{"write:issue"}},
}

// otherVerbs are run by a person with a table token.
var otherVerbs = []Verb{
	{Name: "doctor", Scopes: []string{"read:repository"}},
	{Name: "init", Scopes: Init.Names()},
}

// WithFlag adds the flag's scopes to verb's.
func WithFlag(verb string) []string {
	for _, v := range slices.Concat(AgentVerbs, otherVerbs) {
		if v.Name == verb {
			return slices.Concat(v.Scopes, v.Adds)
		}
	}
	return nil
}

// Of excludes flags' scopes; nil for a verb that reads no server.
func Of(verb string) []string {
	for _, v := range slices.Concat(AgentVerbs, otherVerbs) {
		if v.Name == verb {
			return v.Scopes
		}
	}
	return nil
}
