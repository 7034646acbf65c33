package issues

import "testing"

// An outsider speaks for no agent, even one the agents map names it for:
// in the gated posture the mapped accounts only read the issue. Writers
// speak as their mapped agents, or as any agent without a map; with
// writers unknown, every author counts as one.
func TestSpeaksAs(t *testing.T) {
	mapped := map[string][]string{"architect": {"arch", "reader"}}
	cases := []struct {
		name  string
		a     Authors
		login string
		want  bool
	}{
		{"a mapped writer", Authors{Known: true, Writers: []string{"arch"}, Agents: mapped}, "arch", true},
		{"a mapped outsider", Authors{Known: true, Writers: []string{"arch"}, Agents: mapped}, "reader", false},
		{"an unmapped writer", Authors{Known: true, Writers: []string{"arch", "dev"}, Agents: mapped}, "dev", false},
		{"a writer, no map", Authors{Known: true, Writers: []string{"dev"}}, "dev", true},
		{"an outsider, no map", Authors{Known: true, Writers: []string{"dev"}}, "reader", false},
		{"writers unknown", Authors{Agents: mapped}, "reader", true},
	}
	for _, c := range cases {
		if got := c.a.SpeaksAs(c.login, "architect"); got != c.want {
			t.Errorf("%s: SpeaksAs(%q, architect) = %v, want %v", c.name, c.login, got, c.want)
		}
	}
}
