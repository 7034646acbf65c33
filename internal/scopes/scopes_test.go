package scopes

import (
	"slices"
	"strings"
	"testing"
)

// TestAgentIsTheUnionOfItsVerbs: the agent's token holds every scope its
// verbs need, and each of its scopes is needed by a verb.
func TestAgentIsTheUnionOfItsVerbs(t *testing.T) {
	var needed []string
	for _, v := range AgentVerbs {
		needed = append(needed, v.Scopes...)
		needed = append(needed, v.Adds...)
	}
	for _, s := range needed {
		if !Holds(Agent.Names(), s) {
			t.Errorf("a verb needs %s, which the agent's token (%s) lacks", s, Agent.List())
		}
	}
	for i, s := range Agent.Names() {
		without := slices.Delete(Agent.Names(), i, i+1)
		if !slices.ContainsFunc(needed, func(n string) bool { return !Holds(without, n) }) {
			t.Errorf("the agent's token holds %s, which no verb needs", s)
		}
	}
}

// TestHolds: a write scope holds its read scope, all holds every scope.
func TestHolds(t *testing.T) {
	for _, c := range []struct {
		held []string
		want string
		ok   bool
	}{
		{[]string{"write:issue"}, "read:issue", true},
		{[]string{"read:issue"}, "write:issue", false},
		{[]string{"write:repository"}, "read:organization", false},
		{[]string{"all"}, "write:organization", true},
		{nil, "read:user", false},
	} {
		if got := Holds(c.held, c.want); got != c.ok {
			t.Errorf("Holds(%v, %s) = %v, want %v", c.held, c.want, got, c.ok)
		}
	}
}

// TestEveryScopeSaysWhyAndWhere: each scope of the table says what it is
// for and the routes that ask for it; a token names each scope once.
func TestEveryScopeSaysWhyAndWhere(t *testing.T) {
	ids := map[string]bool{}
	for _, tok := range Tokens {
		if ids[tok.ID] {
			t.Errorf("two tokens have the id %s", tok.ID)
		}
		ids[tok.ID] = true
		seen := map[string]bool{}
		for _, s := range tok.Scopes {
			if s.For == "" || len(s.Routes) == 0 {
				t.Errorf("%s: %s says no use or no route", tok.Name, s.Name)
			}
			level, category, found := strings.Cut(s.Name, ":")
			if !found || level != "read" && level != "write" || seen[category] {
				t.Errorf("%s: %s is not a scope of a category of its own", tok.Name, s.Name)
			}
			seen[category] = true
		}
	}
}

// TestTheGatedTokens: the gate's token has report's scopes; a gated
// agent's reads what context, history and status read, and writes
// nothing.
func TestTheGatedTokens(t *testing.T) {
	if !slices.Equal(Gate.Names(), Of("report")) {
		t.Errorf("the gate's token has %s, report needs %s", Gate.List(), Join(Of("report")))
	}
	for _, verb := range []string{"context", "history", "status"} {
		for _, s := range Of(verb) {
			if !Holds(GatedAgent.Names(), s) {
				t.Errorf("%s needs %s, which a gated agent's token (%s) lacks", verb, s, GatedAgent.List())
			}
		}
	}
	for _, s := range GatedAgent.Names() {
		if strings.HasPrefix(s, "write:") {
			t.Errorf("a gated agent's token holds %s", s)
		}
	}
}
