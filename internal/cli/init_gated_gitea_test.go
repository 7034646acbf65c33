package cli_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/forge"
	"github.com/gns-guard/gns-guard/internal/meter"
	"github.com/gns-guard/gns-guard/internal/posture"
	"github.com/gns-guard/gns-guard/internal/settings"
	"github.com/gns-guard/gns-guard/internal/setup"
	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// gatedRepo is a private organisation repository for the gated posture,
// driven as the organisation's owner (no site administrator).
type gatedRepo struct {
	t *testing.T
	s *giteatest.Server
	g *giteatest.Gated
}

func (r *gatedRepo) full() string { return r.g.Org + "/" + r.g.Repo }

// must sends a request as the owner; the test fails on error.
func (r *gatedRepo) must(method, path string, in, out any) {
	r.t.Helper()
	if err := actiontest.API(r.t.Context(), r.s, r.g.Owner.Token, method, path, in, out); err != nil {
		r.t.Fatal(err)
	}
}

// gns runs a verb on the repository with the owner's token.
func (r *gatedRepo) gns(verb string, args ...string) (string, string, int) {
	r.t.Helper()
	base := []string{verb, "--repo", r.full(), "--server", r.s.URL, "--token", r.g.Owner.Token}
	if verb == "doctor" {
		base = append(base, "--admin-token", r.g.Owner.Token)
	}
	return gns(r.t, nil, append(base, args...)...)
}

// initGated runs `init --gated` with the gate account and the agents
// mapped as architect, tester, ...
func (r *gatedRepo) initGated(args ...string) string {
	r.t.Helper()
	var agents []string
	for i, a := range r.g.Agents {
		agents = append(agents, []string{"architect", "tester"}[i]+"="+a.Login)
	}
	all := append([]string{"--gated", "--gate-account", r.g.Gate.Login, "--agents", strings.Join(agents, ",")}, args...)
	stdout, stderr, code := r.gns("init", all...)
	if code != 0 {
		r.t.Fatalf("init %v: exit %d\n%s%s", all, code, stdout, stderr)
	}
	return stdout
}

// giteaTeam is a team as Gitea reports it, its members and whether it
// reaches the repository.
type giteaTeam struct {
	ID      int64             `json:"id"`
	Name    string            `json:"name"`
	Units   map[string]string `json:"units_map"`
	Members []string
	HasRepo bool
}

// teams are the organisation's teams named gns-*, by name.
func (r *gatedRepo) teams() map[string]giteaTeam {
	r.t.Helper()
	var ts []giteaTeam
	r.must(http.MethodGet, "/orgs/"+url.PathEscape(r.g.Org)+"/teams", nil, &ts)
	out := map[string]giteaTeam{}
	for _, t := range ts {
		if !strings.HasPrefix(t.Name, "gns-") {
			continue
		}
		maps.DeleteFunc(t.Units, func(_, mode string) bool { return mode == "none" })
		var ms []struct{ Login string }
		r.must(http.MethodGet, fmt.Sprintf("/teams/%d/members", t.ID), nil, &ms)
		for _, m := range ms {
			t.Members = append(t.Members, m.Login)
		}
		slices.Sort(t.Members)
		err := actiontest.API(r.t.Context(), r.s, r.g.Owner.Token, http.MethodGet, fmt.Sprintf("/teams/%d/repos/%s", t.ID, r.full()), nil, nil)
		t.HasRepo = err == nil
		out[t.Name] = t
	}
	return out
}

// writers are the logins Gitea lists as the issues' writers.
func (r *gatedRepo) writers() []string {
	r.t.Helper()
	var us []struct{ Login string }
	r.must(http.MethodGet, r.g.Path("/assignees"), nil, &us)
	var out []string
	for _, u := range us {
		out = append(out, u.Login)
	}
	return out
}

// settingsFile reads the settings file of main and resolves it.
func (r *gatedRepo) settingsFile() (string, settings.Resolved) {
	r.t.Helper()
	var f struct {
		Content string `json:"content"`
		SHA     string `json:"sha"`
	}
	r.must(http.MethodGet, r.g.Path("/contents/%s?ref=main", settings.FileName), nil, &f)
	b, err := base64.StdEncoding.DecodeString(f.Content)
	if err != nil {
		r.t.Fatal(err)
	}
	l, err := settings.FileLayer(settings.FileName, b)
	if err != nil {
		r.t.Fatal(err)
	}
	res, err := settings.Resolve(l)
	if err != nil {
		r.t.Fatal(err)
	}
	return string(b), res
}

// gateChecks are doctor's gate.* checks, as JSON, and its exit code.
func (r *gatedRepo) gateChecks() (map[string]doctorCheck, int) {
	r.t.Helper()
	stdout, stderr, code := r.gns("doctor", "--format", "json")
	var checks []doctorCheck
	if err := json.Unmarshal([]byte(stdout), &checks); err != nil {
		r.t.Fatalf("doctor --format json: exit %d, %v\n%s%s", code, err, stdout, stderr)
	}
	out := map[string]doctorCheck{}
	for _, c := range checks {
		if strings.HasPrefix(c.ID, "gate.") {
			out[c.ID] = c
		}
	}
	return out, code
}

// TestInitGatedThenDoctorGitea: on a private organisation repository,
// `init --gated` (a dry run first) makes the agents' team read and the
// gate's write, as Gitea then reports them and lists the issues' writers,
// and proposes a settings file naming the gate account. With init's
// next steps taken (the pull request merged, the meter serving the gate,
// meter-url and the keys published, init run again for the protection,
// the secrets set), doctor passes every check, the gate's among them,
// and names what the posture closes and what it does not.
func TestInitGatedThenDoctorGitea(t *testing.T) {
	t.Parallel()
	start := time.Now()
	s := giteatest.Require(t)
	r := &gatedRepo{t: t, s: s, g: s.NewGatedAccounts(t, 1)}
	gate, agent := r.g.Gate.Login, r.g.Agents[0].Login

	dry := r.initGated("--dry-run")
	for _, want := range []string{
		"  create the team gns-agents in " + r.g.Org + " (Code read, Issues read): would be done\n",
		"  add " + agent + " to the team gns-agents: would be done\n",
		"  create the team gns-gate in " + r.g.Org + " (Code read, Issues write): would be done\n",
		"  add " + gate + " to the team gns-gate: would be done\n",
	} {
		if !strings.Contains(dry, want) {
			t.Errorf("the dry run lacks %q:\n%s", want, dry)
		}
	}
	if len(r.teams()) != 0 {
		t.Fatal("the dry run made a team")
	}

	out := r.initGated()
	t.Logf("init --gated:\n%s", out)
	teams := r.teams()
	for name, want := range map[string]struct {
		units   map[string]string
		members []string
	}{setup.AgentsTeam: {giteatest.AgentUnits, []string{agent}}, setup.GateTeam: {giteatest.GateUnits, []string{gate}}} {
		tm, ok := teams[name]
		if !ok || !maps.Equal(tm.Units, want.units) || !slices.Equal(tm.Members, want.members) || !tm.HasRepo {
			t.Errorf("team %s as Gitea reports it: %+v; want units %v, members %v, the repository", name, tm, want.units, want.members)
		}
	}
	if w := r.writers(); !slices.Contains(w, gate) || slices.Contains(w, agent) {
		t.Errorf("Gitea's writers of the issues: %v; want %s and not %s", w, gate, agent)
	}
	mergeFirstPull(t, r)
	text, set := r.settingsFile()
	if set.Config.GateAccount != gate || !slices.Equal(set.Config.Agents["architect"], []string{agent}) {
		t.Fatalf("the settings file init proposed: gate-account %q, agents %v\n%s", set.Config.GateAccount, set.Config.Agents, text)
	}

	// init's next steps: the meter serving the gate with the gate's token,
	// its address and the keys published, init again, the secrets.
	rm := startMeter(t, &actiontest.Repo{S: s, Owner: r.g.Org, Name: r.g.Repo}, filepath.Join(t.TempDir(), "meter.db"), nil,
		func(o *meter.Options) { o.Gate = &meter.GateOptions{Token: r.g.Gate.Token, Connect: forge.Connect} })
	key := strings.TrimSpace(mustGns(t, "keygen"))
	pub := strings.TrimSpace(mustGnsEnv(t, map[string]string{"GNS_GUARD_LEDGER_KEY": key}, "pubkey"))
	r.commitSettings(text + "ledger-public-key: " + pub + "\n" + meterConfig(rm))
	again := r.initGated()
	if !strings.Contains(again, "protect main: no pushes, and merging waits for `gns-guard / guard (pull_request_target)`: done") ||
		!strings.Contains(again, ".gitea/gns-guard.yml sets meter-url and meter-public-key.") {
		t.Errorf("init again:\n%s", again)
	}
	for name, value := range map[string]string{"GNS_GUARD_LEDGER_KEY": key, "GNS_GUARD_ADMIN_TOKEN": r.g.Owner.Token, "GNS_GUARD_TOKEN": "t"} {
		r.must(http.MethodPut, r.g.Path("/actions/secrets/%s", name), map[string]any{"data": value}, nil)
	}

	doctor, stderr, code := r.gns("doctor")
	t.Logf("doctor:\n%s", doctor)
	if code != 0 {
		t.Fatalf("doctor on the gated posture init built: exit %d, want 0\n%s%s", code, doctor, stderr)
	}
	checks, _ := r.gateChecks()
	for _, id := range []string{posture.CheckGateAccount, posture.CheckGateReadOnly, posture.CheckGateAgents, posture.CheckGateSettings,
		posture.CheckGateMeter} {
		if c, ok := checks[id]; !ok || !c.Holds {
			t.Errorf("%s: %+v", id, c)
		}
	}
	wantNamed(t, doctor, "The gated posture (gate-account "+gate+") closes, since the agents only read:\n")
	t.Logf("TestInitGatedThenDoctorGitea took %s", time.Since(start).Round(time.Millisecond))
}

// wantNamed checks that doctor's text opens with heading and names every
// attack the posture closes and every one it does not.
func wantNamed(t *testing.T, doctor, heading string) {
	t.Helper()
	for _, want := range slices.Concat([]string{heading, "It does not close:\n"}, posture.GateCloses, posture.GateLeavesOpen) {
		if !strings.Contains(doctor, want) {
			t.Errorf("doctor's text lacks %q", want)
		}
	}
}

// mergeFirstPull merges init's pull request, #1, once Gitea has checked
// its mergeability (HTTP 405 until then).
func mergeFirstPull(t *testing.T, r *gatedRepo) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		err := actiontest.API(t.Context(), r.s, r.g.Owner.Token, http.MethodPost, r.g.Path("/pulls/1/merge"), map[string]any{"Do": "merge"}, nil)
		if err == nil {
			return
		}
		if !strings.Contains(err.Error(), "HTTP 405") || time.Now().After(deadline) {
			t.Fatalf("merging init's pull request: %v", err)
		}
	}
}

// commitSettings replaces the settings file of main, as the owner.
func (r *gatedRepo) commitSettings(content string) {
	r.t.Helper()
	var cur struct {
		SHA string `json:"sha"`
	}
	r.must(http.MethodGet, r.g.Path("/contents/%s?ref=main", settings.FileName), nil, &cur)
	r.must(http.MethodPut, r.g.Path("/contents/%s", settings.FileName), map[string]any{"content": base64.StdEncoding.EncodeToString([]byte(content)),
		"sha": cur.SHA, "message": "Publish the keys and the meter", "branch": "main"}, nil)
}

// TestDoctorNamesAGatedAgentThatWritesGitea: in the gated posture
// giteatest.NewGated builds, doctor finds the agents read-only; once an
// agent `agents` maps joins a team with Issues write, doctor exits 1,
// names that login and the team, and says the posture closes none of
// the attacks it lists.
func TestDoctorNamesAGatedAgentThatWritesGitea(t *testing.T) {
	t.Parallel()
	s := giteatest.Require(t)
	r := &gatedRepo{t: t, s: s, g: s.NewGated(t, 2)}
	reader, writer := r.g.Agents[0].Login, r.g.Agents[1].Login
	r.must(http.MethodPost, r.g.Path("/contents/%s", settings.FileName), map[string]any{"message": "gated", "content": base64.StdEncoding.EncodeToString(
		[]byte(fmt.Sprintf("gate-account: %s\nagents:\n  architect: [%s]\n  tester: [%s]\n", r.g.Gate.Login, reader, writer)))}, nil)

	checks, _ := r.gateChecks()
	if c := checks[posture.CheckGateReadOnly]; !c.Holds || !checks[posture.CheckGateAccount].Holds {
		t.Errorf("the posture NewGated builds: %+v", checks)
	}
	if _, err := r.g.AddTeam(t.Context(), s, "devs", map[string]string{"repo.issues": "write", "repo.code": "read"}, writer); err != nil {
		t.Fatal(err)
	}
	checks, code := r.gateChecks()
	c := checks[posture.CheckGateReadOnly]
	if code != 1 || c.Holds || !slices.Equal(c.Logins, []string{writer}) || !strings.Contains(c.Why, writer+" (team devs) can write the issues") {
		t.Errorf("with %s in a team with Issues write: exit %d, %+v", writer, code, c)
	}
	doctor, _, _ := r.gns("doctor")
	t.Logf("doctor:\n%s", doctor)
	wantNamed(t, doctor, "would close these, but closes none while gate.agents-read-only does not hold:\n")
}
