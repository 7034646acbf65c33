package cli_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/scopes"
	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// agentScopes are the token scopes of the verbs an agent runs, as their
// messages and docs/agents.md state them.
var agentScopes = map[string][]string{}

func init() {
	for _, v := range scopes.AgentVerbs {
		agentScopes[v.Name] = v.Scopes
	}
}

// TestAgentTokenScopes runs each agent verb on a governed issue with a
// token of exactly the scopes agentScopes lists (it works), and with each
// of them left out (it fails, naming the scopes it needs): the scopes
// docs/agents.md tells people to give an agent's token.
func TestAgentTokenScopes(t *testing.T) {
	t.Parallel()
	f := newFlow(t, 20000, "cascade::depth-2", "size::medium")
	repo, issue := f.r.Owner+"/"+f.r.Name, strconv.FormatInt(f.n, 10)
	verbs := slices.Sorted(func(yield func(string) bool) {
		for v := range agentScopes {
			if !yield(v) {
				return
			}
		}
	})
	// Each set holds read:misc, which no verb uses: Gitea reads a token
	// with no scope at all as one with every scope.
	var sets [][]string
	for _, v := range verbs {
		sets = append(sets, append(slices.Clone(agentScopes[v]), "read:misc"))
		for i := range agentScopes[v] {
			sets = append(sets, append(slices.Delete(slices.Clone(agentScopes[v]), i, i+1), "read:misc"))
		}
	}
	login := fmt.Sprintf("scoped%d", time.Now().UnixNano()%1e9)
	tokens, err := f.r.S.NewUserScoped(context.Background(), login, sets...)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.r.S.AddCollaborator(context.Background(), f.r.Owner, f.r.Name, login, giteatest.PermWrite); err != nil {
		t.Fatal(err)
	}
	args := func(verb string, k int) []string {
		base := []string{verb, "--repo", repo, "--server", f.r.S.URL}
		switch verb {
		case "status":
		case "report":
			base = append(base, "--issue", issue, "--agent", "lead-developer", "--invocation", fmt.Sprintf("scopes-%d", k),
				"--consumed", "10", "--action", "checked the scopes", "--next-agent", "code-reviewer", "--next-estimate", "1000")
		default:
			base = append(base, "--issue", issue)
		}
		return base
	}
	k := 0
	for _, v := range verbs {
		for i := 0; i <= len(agentScopes[v]); i++ {
			tok, scopes := tokens[k], sets[k]
			k++
			_, stderr, code := gns(t, map[string]string{"GITEA_TOKEN": tok}, args(v, k)...)
			switch {
			case i == 0 && code != 0:
				t.Errorf("%s with %v: exit %d, %s", v, scopes, code, stderr)
			case i > 0 && code == 0:
				t.Errorf("%s works without %s (with %v): it does not need it", v, agentScopes[v][i-1], scopes)
			case i > 0 && !strings.Contains(stderr, "403"):
				t.Errorf("%s without %s: exit %d, %s; want a refusal (HTTP 403)", v, agentScopes[v][i-1], code, stderr)
			}
		}
	}
}
