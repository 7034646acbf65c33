package meter

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/meterclient"
	"github.com/gns-guard/gns-guard/internal/metering"
	"github.com/gns-guard/gns-guard/internal/meterstore"
	"github.com/gns-guard/gns-guard/internal/port"
)

// gatedSettings is the gated posture: the gate writes as gate-bot; the
// reader, who only reads the repository, speaks as code-reviewer, and
// dev-bot as lead-developer.
const gatedSettings = "gate-account: gate-bot\nagents:\n  code-reviewer: reader\n  lead-developer: dev-bot\n"

// settingsFile commits .gitea/gns-guard.yml and has the guard judge
// issue 7 again.
func (r *rig) settingsFile(content string) {
	r.t.Helper()
	owner := r.gitea.As("acme")
	f := port.FileChange{Path: ".gitea/gns-guard.yml", Content: []byte(content)}
	if old, err := owner.FileAt(context.Background(), "", f.Path, 1<<20); err == nil {
		f.SHA = old.SHA
	}
	if _, err := owner.CommitFiles(context.Background(), port.Commit{Files: []port.FileChange{f}}); err != nil {
		r.t.Fatal(err)
	}
	judge(r.t, r.gitea, 7)
}

// open has the gate open inv on issue 7 for login, as agent.
func (r *rig) open(inv, login, agent string) {
	r.t.Helper()
	o := meterstore.Opened{Invocation: inv, Agent: agent, Login: login, Estimate: 3000, Opened: time.Now()}
	if _, ref, err := r.store.OpenInvocation(context.Background(), issue7, o, admitAll); err != nil || ref != nil {
		r.t.Fatalf("open %s: %v %v", inv, ref, err)
	}
}

func admitAll(metering.Pending, []meterstore.Opened) *metering.Refusal { return nil }

// postAs calls url with token, naming agent in the header when not empty.
func postAs(t *testing.T, url, token, agent string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(chatBody))
	req.Header.Set("Authorization", "Bearer "+token)
	if agent != "" {
		req.Header.Set(AgentHeader, agent)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e struct {
		Error struct{ Message, Code string }
	}
	_ = json.NewDecoder(resp.Body).Decode(&e)
	return resp.StatusCode, e.Error.Code, e.Error.Message
}

// In the gated posture a call spends only in an invocation the gate
// opened for its login, as the agent it was opened for; a login the
// agents setting maps spends though it only reads the repository, and
// one it does not map is refused, a writer too.
func TestGatedPostureSpendsInOpenedInvocations(t *testing.T) {
	r := newRig(t)
	r.gitea.Token("dev-token", "dev-bot")
	r.gitea.Token("outsider-token", "outsider")
	r.gitea.Grant("dev-bot", "read")
	r.settingsFile(gatedSettings)
	r.open("gate-00000000000a", "reader", "code-reviewer")
	r.open("gate-00000000000b", "dev-bot", "lead-developer")
	in := func(inv string) string {
		return r.srv.URL + "/acme/app/issues/7/invocations/" + inv + "/openai/v1/chat/completions"
	}
	for _, tt := range []struct {
		name, url, token, agent string
		status                  int
		code                    string
		says                    []string
	}{
		{"no invocation", r.srv.URL + "/acme/app/issues/7/openai/v1/chat/completions", "reader-token", "", 403, "gate-unopened",
			[]string{"the gate never opened an invocation for this call", "gns-guard spawn", "the gate's spawn endpoint"}},
		{"an invocation the gate never opened", in("inv-1"), "reader-token", "", 403, "gate-unopened",
			[]string{"the gate never opened invocation inv-1 on issue #7", "ask the gate for one"}},
		{"another login's invocation", in("gate-00000000000b"), "reader-token", "", 403, "gate-unopened",
			[]string{"invocation gate-00000000000b was opened for dev-bot, not reader"}},
		{"another agent", in("gate-00000000000a"), "reader-token", "lead-developer", 403, "agent-impersonated",
			[]string{`opened for agent "code-reviewer"`, `reader may not spend in it as agent "lead-developer"`}},
		{"a writer the agents setting does not map", in("gate-00000000000a"), agentToken1, "", 403, "meter-auth",
			[]string{"coder may not spend on acme/app", "gated posture (gate-account gate-bot)", "agents maps no agent to coder"}},
		{"an outsider", in("gate-00000000000a"), "outsider-token", "", 403, "meter-auth",
			[]string{"agents maps no agent to outsider"}},
		{"its own, no agent named", in("gate-00000000000a"), "reader-token", "", 200, "", nil},
		{"its own, as its agent", in("gate-00000000000a"), "reader-token", "code-reviewer", 200, "", nil},
		{"dev-bot's own", in("gate-00000000000b"), "dev-token", "", 200, "", nil},
	} {
		status, code, msg := postAs(t, tt.url, tt.token, tt.agent)
		if status != tt.status || code != tt.code {
			t.Errorf("%s: %d %q, want %d %q: %s", tt.name, status, code, tt.status, tt.code, msg)
		}
		for _, s := range tt.says {
			if !strings.Contains(msg, s) {
				t.Errorf("%s: the message does not say %q: %s", tt.name, s, msg)
			}
		}
	}
	if n := len(r.prov.Requests()); n != 3 {
		t.Errorf("%d calls reached the provider, want the 3 admitted", n)
	}
	calls, err := r.calls()
	if err != nil || len(calls) != 3 || calls[0].Login != "reader" || calls[0].Agent != "code-reviewer" || calls[2].Agent != "lead-developer" {
		t.Errorf("the store holds %+v, %v", calls, err)
	}
	tree, err := meterclient.Client{Base: r.srv.URL, Token: "reader-token"}.Tree(context.Background(), "acme/app", 7)
	if err != nil || tree.Repo != "acme/app" || tree.Issue != 7 || len(tree.Invocations) != 2 {
		t.Fatalf("the tree: %+v %v", tree, err)
	}
	if b := tree.Invocations[0]; b.Invocation != "gate-00000000000a" || b.Login != "reader" || b.Calls != 2 || b.Tokens <= 0 || b.InFlight != 0 || b.Estimate != 3000 {
		t.Errorf("the reader's branch: %+v", b)
	}
	var raw struct{ Invocations []map[string]any }
	if err := json.Unmarshal([]byte(getBody(t, r.srv.URL+"/acme/app/issues/7/invocations", "reader-token")), &raw); err != nil || len(raw.Invocations) != 2 {
		t.Fatalf("the tree as JSON: %v %+v", err, raw)
	}
	keys := slices.Sorted(maps.Keys(raw.Invocations[1]))
	if want := []string{"agent", "calls", "cost_micro_usd", "depth", "estimate", "in_flight", "invocation", "login", "opened", "parent", "tokens"}; !slices.Equal(keys, want) {
		t.Errorf("a branch's keys %v, want %v", keys, want)
	}
	if _, err := (meterclient.Client{Base: r.srv.URL, Token: "outsider-token"}).Tree(context.Background(), "acme/app", 7); err == nil || !strings.Contains(err.Error(), "403") {
		t.Errorf("an outsider read the tree: %v", err)
	}
}

// getBody is a GET's answer, with token.
func getBody(t *testing.T, url, token string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return string(data)
}

// A refusal of the gated posture is the provider's error shape too.
func TestGateUnopenedInAnthropicsShape(t *testing.T) {
	r := newRig(t)
	r.settingsFile(gatedSettings)
	resp, body := post(t, r.base(7, "anthropic")+"/v1/messages", "reader-token", `{"model":"claude-sonnet-4-5","max_tokens":5,"messages":[]}`)
	var e struct {
		Type  string
		Error struct{ Type, Message string }
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil || resp.StatusCode != 403 || e.Type != "error" || e.Error.Type != "permission_error" ||
		!strings.Contains(e.Error.Message, "the gate never opened invocation inv-1") || !strings.HasSuffix(e.Error.Message, "[gate-unopened]") {
		t.Errorf("%d %s", resp.StatusCode, body)
	}
}

// The gated posture with an empty agents setting refuses every login, and
// says which setting admits one; a login taken out of agents stops
// spending within the issue's reading.
func TestGatedPostureWithoutAgentsRefusesEveryone(t *testing.T) {
	clk := &clock{t: time.Now()}
	r := newRig(t, func(o *Options) { o.Now = clk.now })
	r.settingsFile(gatedSettings)
	r.open("gate-00000000000a", "reader", "code-reviewer")
	url := r.base(7, "openai") + "/chat/completions"
	url = strings.Replace(url, "/invocations/inv-1/", "/invocations/gate-00000000000a/", 1)
	if status, code, msg := postAs(t, url, "reader-token", ""); status != 200 {
		t.Fatalf("the mapped reader: %d %s %s", status, code, msg)
	}
	r.settingsFile("gate-account: gate-bot\n")
	clk.advance(DefaultIssueTTL + time.Millisecond)
	for _, token := range []string{"reader-token", agentToken1} {
		status, code, msg := postAs(t, url, token, "")
		if status != 403 || code != "meter-auth" || !strings.Contains(msg, "agents maps none") || !strings.Contains(msg, "under agents in .gitea/gns-guard.yml") {
			t.Errorf("%s: %d %s %s", token, status, code, msg)
		}
	}
}

// Without gate-account nothing changes: the agents setting admits no
// reader, and a URL with no invocation spends in the one the meter opens.
func TestUngatedPostureIsUnchanged(t *testing.T) {
	r := newRig(t)
	r.settingsFile("agents:\n  code-reviewer: [reader, coder]\n")
	status, code, msg := postAs(t, r.base(7, "openai")+"/chat/completions", "reader-token", "")
	if status != 403 || code != "meter-auth" || msg != "gns-guard meter: "+notWriter("reader", "acme/app", false).Message+" [meter-auth]" {
		t.Errorf("a mapped reader, ungated: %d %s %s", status, code, msg)
	}
	if status, code, msg := postAs(t, r.srv.URL+"/acme/app/issues/7/openai/v1/chat/completions", agentToken1, ""); status != 200 {
		t.Fatalf("a writer with no invocation named: %d %s %s", status, code, msg)
	}
	if inv, _, err := r.store.Current(context.Background(), issue7, "coder"); err != nil || inv != "open-coder-1" {
		t.Errorf("the meter opened %q, %v; want open-coder-1", inv, err)
	}
}
