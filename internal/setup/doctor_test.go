package setup

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/meterclient"
	"github.com/gns-guard/gns-guard/internal/posture"
)

// doctor tells "could not check" apart from "does not hold": its own
// state in the text and the JSON, exit 4 when every check made holds and
// some could not be made, and 1 whenever one made does not hold.
func TestDoctorCouldNotCheck(t *testing.T) {
	held := posture.Check{ID: "a.held", Holds: true, Why: "fine", Logins: []string{}}
	unread := posture.Check{ID: "b.unread", Why: posture.CouldNotCheck + "the token may not read the secrets", Logins: []string{}}
	broken := posture.Check{ID: "c.broken", Why: "main is not protected", Logins: []string{}}
	for _, c := range []struct {
		checks []posture.Check
		code   int
		text   []string
	}{
		{[]posture.Check{held}, exitcode.Clean, []string{"holds  a.held", "Every guarantee of the threat model holds (1 checks)."}},
		{[]posture.Check{held, unread}, exitcode.Unchecked, []string{"could not check  b.unread  the token may not read the secrets",
			"Every check that could be made holds (1 of 2). 1 could not be checked with the tokens given"}},
		{[]posture.Check{held, unread, broken}, exitcode.Violation, []string{"BROKEN           c.broken", "1 of 3 guarantees do not hold", "1 could not be checked"}},
	} {
		d := &Diagnosis{Facts: posture.Facts{Repo: "o/r", DefaultBranch: "main"}, Server: "http://gitea.test", Checks: checks(c.checks)}
		if got := exitcode.Code(d.Outcome()); got != c.code {
			t.Errorf("%v: exit %d, want %d", c.checks, got, c.code)
		}
		var b bytes.Buffer
		if err := d.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		for _, want := range c.text {
			if !strings.Contains(b.String(), want) {
				t.Errorf("doctor's text lacks %q:\n%s", want, b.String())
			}
		}
	}
	if d := checks([]posture.Check{unread})[0]; d.State != "could not check" || d.Why != "the token may not read the secrets" || d.Holds {
		t.Errorf("an unread check: %+v", d)
	}
}

// aboutServer answers GET /about as a meter that serves the gate, or not.
func aboutServer(t *testing.T, gate bool, key string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/about" {
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(meterclient.About{Server: "http://gitea.test", PublicKey: key, Gate: gate})
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// In the gated posture doctor adds the gate's checks, asking the meter
// once, and names what the posture closes and what it does not; with a
// mapped agent that writes, it closes none. Ungated, neither shows.
func TestDoctorGated(t *testing.T) {
	facts := posture.Facts{Repo: "acme/api", Owner: "acme", OwnerIsOrg: true, DefaultBranch: "main", Unread: map[string]string{}}
	url := aboutServer(t, true, "k1")
	gate := func(writers ...string) *posture.Gate {
		return &posture.Gate{Account: "gns-gate", Agents: map[string][]string{"coder": {"coder"}}, MeterURL: url, MeterPublicKey: "k1",
			Writers: append([]string{"gns-gate"}, writers...)}
	}
	text := func(d *Diagnosis) string {
		var b bytes.Buffer
		if err := d.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	m := Meter{URL: url, PublicKey: "k1"}
	d := Diagnose(t.Context(), "acme", "api", facts, "http://gitea.test", true, m, gate())
	byID := map[string]Check{}
	for _, c := range d.Checks {
		byID[c.ID] = c
	}
	for _, id := range []string{posture.CheckGateAccount, posture.CheckGateReadOnly, posture.CheckGateAgents, posture.CheckGateSettings,
		posture.CheckGateMeter, checkMeterKey} {
		if c := byID[id]; c.State != StateHolds {
			t.Errorf("%s: %+v", id, c)
		}
	}
	out := text(d)
	for _, want := range append([]string{"The gated posture (gate-account gns-gate) closes, since the agents only read:\n",
		"It does not close:\n"}, append(posture.GateCloses, posture.GateLeavesOpen...)...) {
		if !strings.Contains(out, want) {
			t.Errorf("doctor's text lacks %q:\n%s", want, out)
		}
	}

	d = Diagnose(t.Context(), "acme", "api", facts, "http://gitea.test", true, m, gate("coder"))
	out = text(d)
	if !strings.Contains(out, "would close these, but closes none while gate.agents-read-only does not hold:\n") ||
		!strings.Contains(out, "coder (Gitea lists it among the writers) can write the issues") {
		t.Errorf("with a writing agent:\n%s", out)
	}
	if exitcode.Code(d.Outcome()) != exitcode.Violation {
		t.Errorf("exit %d", exitcode.Code(d.Outcome()))
	}

	d = Diagnose(t.Context(), "acme", "api", facts, "http://gitea.test", true, m, nil)
	if out := text(d); strings.Contains(out, "gate") || len(d.Checks) != len(posture.Judge(facts))+2 {
		t.Errorf("ungated: %d checks\n%s", len(d.Checks), out)
	}
}
