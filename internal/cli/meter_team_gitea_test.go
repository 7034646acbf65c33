package cli_test

import (
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/meter"
	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// fakeClock is a clock a test moves by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *fakeClock) Advance(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.t = c.t.Add(d) }

// teamRepo is a private repository of a private organisation on the real
// server, the guard a collaborator with write.
type teamRepo struct {
	*actiontest.Repo
	org string
}

func newTeamRepo(t *testing.T) *teamRepo {
	t.Helper()
	s := giteatest.Require(t)
	_, name := s.NewRepo(t) // a unique name; the organisation holds its namesake
	org := fmt.Sprintf("team%d", time.Now().UnixNano()%1e9)
	tr := &teamRepo{org: org}
	admin := func(method, path string, in any) {
		t.Helper()
		if err := actiontest.API(t.Context(), s, s.AdminToken, method, path, in, nil); err != nil {
			t.Fatal(err)
		}
	}
	admin(http.MethodPost, "/orgs", map[string]any{"username": org, "visibility": "private"})
	admin(http.MethodPost, "/orgs/"+org+"/repos", map[string]any{"name": name, "private": true, "auto_init": true, "default_branch": "main", "readme": "Default"})
	tr.Repo = actiontest.UseRepo(t, s, org, name)
	return tr
}

// team creates a team of the organisation with units (units_map), gives
// it the repository and adds members; it returns the team's id.
func (tr *teamRepo) team(t *testing.T, name string, units map[string]string, members ...string) int64 {
	t.Helper()
	var team struct {
		ID int64 `json:"id"`
	}
	tr.API(t, tr.S.AdminToken, http.MethodPost, "/orgs/"+tr.org+"/teams", map[string]any{"name": name, "units_map": units, "includes_all_repositories": false}, &team)
	tr.API(t, tr.S.AdminToken, http.MethodPut, fmt.Sprintf("/teams/%d/repos/%s/%s", team.ID, url.PathEscape(tr.Owner), url.PathEscape(tr.Name)), nil, nil)
	for _, m := range members {
		tr.API(t, tr.S.AdminToken, http.MethodPut, fmt.Sprintf("/teams/%d/members/%s", team.ID, url.PathEscape(m)), nil, nil)
	}
	return team.ID
}

// The user's report, on the real server: a private organisation's
// repository whose agents are a team with units Issues write and Code
// read, which Gitea's collaborators/{user}/permission answers "none" even
// to the owner. The team's member spends through the meter; a member of a
// read-only team and an outsider are refused 403 meter-auth; a member
// taken out of the team is refused once its login's minute is over on the
// meter's clock.
func TestMeterTeamWithIssuesWriteSpends(t *testing.T) {
	t.Parallel()
	tr := newTeamRepo(t)
	agent, agentToken := newUser(t, tr.S, "agent")
	reader, readerToken := newUser(t, tr.S, "reader")
	outsider, outsiderToken := newUser(t, tr.S, "outsider")
	agents := tr.team(t, "agents", map[string]string{"repo.issues": "write", "repo.code": "read"}, agent)
	tr.team(t, "readers", map[string]string{"repo.issues": "read", "repo.code": "read"}, reader)

	var perm struct {
		Permission string `json:"permission"`
	}
	tr.API(t, tr.S.AdminToken, http.MethodGet, tr.Path("/collaborators/%s/permission", agent), nil, &perm)
	if perm.Permission != "none" {
		t.Fatalf("Gitea answers the team's member permission %q to the owner, not the report's \"none\"", perm.Permission)
	}

	n, d := tr.Open(t, "rate limits", func(n int64) string { return issueWithBudget(n, 30000, "cascade::depth-2, size::medium") }, "cascade::depth-2", "size::medium")
	if res := tr.Step().RunInProcess(t, d, actiontest.InProcess{}); res.Code != 0 {
		t.Fatalf("the guard's first run: %s", res)
	}
	clk := &fakeClock{t: time.Now()}
	rm := startMeter(t, tr.Repo, filepath.Join(t.TempDir(), "meter.db"), nil, func(o *meter.Options) { o.Now = clk.Now })

	if status, body := rm.chat(t, tr.Repo, agentToken, n, "run-1", 50, false); status != 200 {
		t.Fatalf("the team's member: %d %s\n%s", status, body, rm.log)
	}
	for _, c := range []struct{ login, token string }{{reader, readerToken}, {outsider, outsiderToken}} {
		status, body := rm.chat(t, tr.Repo, c.token, n, "run-1", 50, false)
		if status != 403 || !strings.Contains(body, "meter-auth") || !strings.Contains(body, c.login+" cannot write the issues of "+tr.Owner+"/"+tr.Name) {
			t.Errorf("%s: %d %s", c.login, status, body)
		}
	}

	tr.API(t, tr.S.AdminToken, http.MethodDelete, fmt.Sprintf("/teams/%d/members/%s", agents, url.PathEscape(agent)), nil, nil)
	clk.Advance(meter.MaxLoginTTL + time.Second)
	if status, body := rm.chat(t, tr.Repo, agentToken, n, "run-1", 50, false); status != 403 || !strings.Contains(body, "meter-auth") {
		t.Errorf("a member taken out of the team, a minute on: %d %s", status, body)
	}
	if got := len(rm.prov.Requests()); got != 1 {
		t.Errorf("%d calls reached the provider, want the member's one", got)
	}
}
