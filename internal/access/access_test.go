package access

import (
	"slices"
	"testing"
)

// TestCanFollowsTheListAndTheOwner: a login is a writer when the
// server's list names it or it owns the repository; an account the list
// does not name is not, whatever it may read.
func TestCanFollowsTheListAndTheOwner(t *testing.T) {
	w := Writers{Owner: "acme", Listed: []string{"agent1", "Dev-Bot"}}
	for _, c := range []struct {
		login string
		want  bool
	}{
		{"agent1", true},
		{"dev-bot", true}, // Gitea's logins are unique whatever their case
		{"acme", true},
		{"ACME", true},
		{"reader", false},
		{"", false},
	} {
		if got := w.Can(c.login); got != c.want {
			t.Errorf("Can(%q) = %v, want %v", c.login, got, c.want)
		}
	}
	if (Writers{}).Can("") {
		t.Error("an empty login writes an unnamed repository")
	}
}

// TestLoginsHoldTheOwnerOnce: the list the guard records is sorted, each
// login once, the owner among them.
func TestLoginsHoldTheOwnerOnce(t *testing.T) {
	got := Writers{Owner: "alice", Listed: []string{"zed", "alice", "bob", "bob", ""}}.Logins()
	if want := []string{"alice", "bob", "zed"}; !slices.Equal(got, want) {
		t.Errorf("Logins() = %v, want %v", got, want)
	}
	if got := (Writers{Owner: "acme"}).Logins(); !slices.Equal(got, []string{"acme"}) {
		t.Errorf("Logins() of an empty list = %v", got)
	}
}

// TestActsAsFollowsTheAgentsMap: with agents set, a writer acts only as
// an agent mapped to it (no agent named: one of its own); without it, as
// any agent.
func TestActsAsFollowsTheAgentsMap(t *testing.T) {
	mapped := map[string][]string{"code-reviewer": {"rev-bot"}, "tester": {"qa", "rev-bot"}}
	for _, c := range []struct {
		agents       map[string][]string
		login, agent string
		want         bool
	}{
		{mapped, "rev-bot", "code-reviewer", true},
		{mapped, "qa", "tester", true},
		{mapped, "qa", "code-reviewer", false},
		{mapped, "dev-bot", "code-reviewer", false},
		{mapped, "qa", "", true},
		{mapped, "dev-bot", "", false},
		{nil, "dev-bot", "code-reviewer", true},
		{nil, "dev-bot", "", true},
	} {
		if got := ActsAs(c.agents, c.login, c.agent); got != c.want {
			t.Errorf("ActsAs(%v, %q, %q) = %v, want %v", c.agents, c.login, c.agent, got, c.want)
		}
	}
}
