package setup

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/meterclient"
	"github.com/gns-guard/gns-guard/internal/posture"
	"github.com/gns-guard/gns-guard/internal/scopes"
)

// AdminTokenEnv is `doctor`'s owner token when --admin-token is absent.
const AdminTokenEnv = "GNS_GUARD_ADMIN_TOKEN"

// The meter's checks, made when the settings name a meter.
const (
	checkMeterScope = "meter.scope"
	checkMeterKey   = "meter.key"
)

// The states of a check.
const (
	StateHolds     = "holds"
	StateBroken    = "broken"
	StateUnchecked = "could not check"
)

// Check is a guarantee as `doctor` shows it: the judge's, with a state
// that tells "could not check" apart from "does not hold".
type Check struct {
	ID string `json:"id"`
	// State is holds, broken or "could not check".
	State  string   `json:"state"`
	Holds  bool     `json:"holds"`
	Why    string   `json:"why"`
	Logins []string `json:"logins"`
}

// Diagnosis is the posture judged, and the named meter's checks.
type Diagnosis struct {
	Facts  posture.Facts
	Server string
	Checks []Check
	// WithAdmin says the owner's token was given.
	WithAdmin bool
	// Gate is gate-account ("": the ungated posture).
	Gate string
}

// Meter is the named meter's address and published public key.
type Meter struct{ URL, PublicKey string }

// Diagnose judges the posture read (facts) of repository owner/name, and
// asks the meter, if any, what it serves and with which key it signs.
// gate, when set, is the gated posture to judge too.
func Diagnose(ctx context.Context, owner, name string, facts posture.Facts, server string, withAdmin bool, m Meter, gate *posture.Gate) *Diagnosis {
	d := &Diagnosis{Facts: facts, Server: server, WithAdmin: withAdmin, Checks: checks(posture.Judge(facts))}
	var a meterclient.About
	var err error
	if m.URL != "" {
		a, err = meterclient.Client{Base: m.URL}.About(ctx)
	}
	d.Checks = append(d.Checks, meterChecks(m, a, err, owner, name)...)
	if gate != nil {
		gate.Meter = posture.GateMeter{Gate: a.Gate, PublicKey: a.PublicKey}
		if err != nil {
			gate.Meter = posture.GateMeter{Unread: unanswered(m, err)}
		}
		d.Gate = gate.Account
		d.Checks = append(d.Checks, checks(posture.JudgeGate(facts, *gate))...)
	}
	return d
}

// unanswered says the meter did not say what it serves.
func unanswered(m Meter, err error) string {
	return fmt.Sprintf("the meter at %s could not say what it serves: %v", m.URL, err)
}

// meterChecks judges the meter's answer a (or err) to what it serves and
// with which key it signs (docs/meter.md#whom-it-serves): this repository
// must be in its scope, and its key the published meter-public-key.
func meterChecks(m Meter, a meterclient.About, err error, owner, name string) []Check {
	if m.URL == "" {
		return nil
	}
	if err != nil {
		why := unanswered(m, err)
		return []Check{{ID: checkMeterScope, State: StateUnchecked, Why: why, Logins: []string{}},
			{ID: checkMeterKey, State: StateUnchecked, Why: why, Logins: []string{}}}
	}
	scope := Check{ID: checkMeterScope, State: StateHolds, Holds: true, Logins: []string{},
		Why: fmt.Sprintf("the meter at %s serves %s, this repository among them", m.URL, strings.Join(a.Scope, ", "))}
	if !a.Serves(owner, name) {
		scope.State, scope.Holds = StateBroken, false
		scope.Why = fmt.Sprintf("the meter at %s serves %s, not %s/%s: it refuses every call of this repository's agents (meter-scope); "+
			"start it with --scope %s", m.URL, strings.Join(a.Scope, ", "), owner, name, owner)
	}
	key := Check{ID: checkMeterKey, State: StateHolds, Holds: true, Logins: []string{}, Why: "the meter signs with meter-public-key " + a.PublicKey}
	switch m.PublicKey {
	case a.PublicKey:
	case "":
		key.State, key.Holds = StateBroken, false
		key.Why = fmt.Sprintf("meter-url is set but meter-public-key is not: no receipt and no metered total is judged; "+
			"publish %s (gns-guard meter --public-key prints it)", a.PublicKey)
	default:
		key.State, key.Holds = StateBroken, false
		key.Why = fmt.Sprintf("the meter signs with %s, but meter-public-key is %s: every receipt and the metered total fail to verify",
			a.PublicKey, m.PublicKey)
	}
	return []Check{scope, key}
}

// checks gives each judged check its state; the why of one that could
// not be made loses its prefix, which the state now says.
func checks(judged []posture.Check) []Check {
	out := make([]Check, len(judged))
	for i, c := range judged {
		d := Check{ID: c.ID, State: StateHolds, Holds: c.Holds, Why: c.Why, Logins: c.Logins}
		if why, unchecked := c.Unchecked(); unchecked {
			d.State, d.Why = StateUnchecked, why
		} else if !c.Holds {
			d.State = StateBroken
		}
		out[i] = d
	}
	return out
}

// Outcome is the exit: 1 when a check made does not hold, else 4 when
// some could not be made, else 0 (docs/contract.md §9).
func (d *Diagnosis) Outcome() error {
	unchecked := false
	for _, c := range d.Checks {
		switch c.State {
		case StateBroken:
			return exitcode.ErrViolations
		case StateUnchecked:
			unchecked = true
		}
	}
	if unchecked {
		return exitcode.ErrUnchecked
	}
	return nil
}

// WriteText writes one check a line, then a summary.
func (d *Diagnosis) WriteText(out io.Writer) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "gns-guard doctor: %s on %s, default branch %s\n\n", d.Facts.Repo, d.Server, d.Facts.DefaultBranch)
	tw := tabwriter.NewWriter(&b, 0, 8, 2, ' ', 0)
	count := map[string]int{}
	for _, c := range d.Checks {
		state := c.State
		if state == StateBroken {
			state = "BROKEN"
		}
		count[c.State]++
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", state, c.ID, c.Why)
	}
	tw.Flush()
	b.WriteByte('\n')
	switch {
	case count[StateBroken] > 0:
		fmt.Fprintf(&b, "%d of %d guarantees do not hold: see the threat model in the README.", count[StateBroken], len(d.Checks))
	case count[StateUnchecked] > 0:
		fmt.Fprintf(&b, "Every check that could be made holds (%d of %d).", count[StateHolds], len(d.Checks))
	default:
		fmt.Fprintf(&b, "Every guarantee of the threat model holds (%d checks).", len(d.Checks))
	}
	switch n := count[StateUnchecked]; {
	case n > 0 && d.WithAdmin:
		fmt.Fprintf(&b, " %d could not be checked with the tokens given: each says what it needs (%s).", n, scopes.Admin.Needs())
	case n > 0:
		fmt.Fprintf(&b, " %d could not be checked with the tokens given: pass the owner's token as --admin-token (or $%s) to check them.",
			n, AdminTokenEnv)
	}
	b.WriteByte('\n')
	d.writeGate(&b)
	_, err := out.Write(b.Bytes())
	return err
}

// writeGate lists what the gated posture closes, and what it does not.
func (d *Diagnosis) writeGate(b *bytes.Buffer) {
	if d.Gate == "" {
		return
	}
	var unmet []string
	for _, c := range d.Checks {
		if (c.ID == posture.CheckGateAccount || c.ID == posture.CheckGateReadOnly) && c.State != StateHolds {
			unmet = append(unmet, c.ID)
		}
	}
	if len(unmet) > 0 {
		fmt.Fprintf(b, "\nThe gated posture (gate-account %s) would close these, but closes none while %s does not hold:\n",
			d.Gate, strings.Join(unmet, " and "))
	} else {
		fmt.Fprintf(b, "\nThe gated posture (gate-account %s) closes, since the agents only read:\n", d.Gate)
	}
	for _, s := range posture.GateCloses {
		fmt.Fprintf(b, "  - %s\n", s)
	}
	b.WriteString("It does not close:\n")
	for _, s := range posture.GateLeavesOpen {
		fmt.Fprintf(b, "  - %s\n", s)
	}
}
