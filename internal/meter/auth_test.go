package meter

import (
	"testing"

	"github.com/gns-guard/gns-guard/internal/config"
)

// TestMayActAsFollowsTheAgentsMap: with agents set, a login spends only
// as an agent mapped to it (no agent named: one of its own); without it,
// any writer spends as any agent.
func TestMayActAsFollowsTheAgentsMap(t *testing.T) {
	mapped := config.Config{Agents: map[string][]string{"code-reviewer": {"rev-bot"}, "tester": {"qa", "rev-bot"}}}
	for _, c := range []struct {
		cfg          config.Config
		login, agent string
		want         bool
	}{
		{mapped, "rev-bot", "code-reviewer", true},
		{mapped, "qa", "tester", true},
		{mapped, "qa", "code-reviewer", false},
		{mapped, "dev-bot", "code-reviewer", false},
		{mapped, "qa", "", true},
		{mapped, "dev-bot", "", false},
		{config.Config{}, "dev-bot", "code-reviewer", true},
		{config.Config{}, "dev-bot", "", true},
	} {
		if got := mayActAs(c.cfg, c.login, c.agent); got != c.want {
			t.Errorf("mayActAs(%v, %q, %q) = %v, want %v", c.cfg.Agents, c.login, c.agent, got, c.want)
		}
	}
}
