package meter

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/access"
	"github.com/gns-guard/gns-guard/internal/port"
)

// clock is a settable clock for a meter's Options.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) advance(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.t = c.t.Add(d) }

// An organisation's repository whose agents are a team with Issues write
// and Code read (Gitea answers their permission "none"): a member spends,
// in two requests to Gitea that ask no permission; a member of a
// read-only team and an outsider are refused, and told what makes an
// account a writer; a member taken out of the team spends until its
// login's minute is over, then is refused.
func TestTeamWithIssuesWriteSpends(t *testing.T) {
	clk := &clock{t: time.Now()}
	r := newRig(t, func(o *Options) { o.Now = clk.now })
	g := r.gitea
	g.Org = true
	agents := g.AddTeam(port.Team{Name: "agents", Units: map[string]string{"repo.issues": "write", "repo.code": "read"}}, true, "agent1")
	g.AddTeam(port.Team{Name: "readers", Units: map[string]string{"repo.issues": "read", "repo.code": "read"}}, true, "reader1")
	g.Grant("reader1", "none")
	g.Grant("agent1", "none")
	for _, login := range []string{"agent1", "reader1", "outsider"} {
		g.Token(login+"-token", login)
	}
	chat := r.base(7, "openai") + "/chat/completions"
	call := func(token string) (int, string) {
		resp, body := post(t, chat, token, chatBody)
		_, _, msg := openAIError(t, body)
		return resp.StatusCode, msg
	}
	if status, _ := call("agent1-token"); status != 200 {
		t.Fatalf("the team's member: %d\n%s", status, r.log)
	}
	if n := g.Calls("Permission"); n != 0 {
		t.Errorf("the meter asked %d permissions", n)
	}
	for _, login := range []string{"reader1", "outsider"} {
		resp, body := post(t, chat, login+"-token", chatBody)
		code, _, msg := openAIError(t, body)
		if resp.StatusCode != 403 || code != "meter-auth" || !strings.Contains(msg, login+" cannot write the issues of acme/app") || !strings.Contains(msg, access.Grants) || strings.Contains(msg, `"none"`) {
			t.Errorf("%s: %d %s: %s", login, resp.StatusCode, code, msg)
		}
	}
	g.RemoveTeamMember(agents.ID, "agent1")
	clk.advance(MaxLoginTTL - time.Second)
	if status, msg := call("agent1-token"); status != 200 {
		t.Errorf("within its login's minute, a removed member: %d %s", status, msg)
	}
	clk.advance(2 * time.Second)
	if status, msg := call("agent1-token"); status != 403 || !strings.Contains(msg, "agent1 cannot write") {
		t.Errorf("a minute after, a removed member: %d %s", status, msg)
	}
	if n := len(r.prov.Requests()); n != 2 {
		t.Errorf("%d calls reached the provider, want the member's 2", n)
	}
}

// A login is kept at most MaxLoginTTL, whatever LoginTTL asks.
func TestLoginTTLIsAtMostAMinute(t *testing.T) {
	for _, ttl := range []time.Duration{0, time.Hour} {
		r := newRig(t, func(o *Options) { o.LoginTTL = ttl })
		if r.m.logins.ttl != MaxLoginTTL {
			t.Errorf("LoginTTL %s keeps a login %s", ttl, r.m.logins.ttl)
		}
	}
	if r := newRig(t, func(o *Options) { o.LoginTTL = time.Second }); r.m.logins.ttl != time.Second {
		t.Errorf("LoginTTL 1s keeps a login %s", r.m.logins.ttl)
	}
}
