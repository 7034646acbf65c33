package offline

import (
	"fmt"
	"io"
	"strings"

	"github.com/gns-guard/gns-guard/internal/guard"
)

// Rule is one rule of the guard's table as `rules` shows it.
type Rule struct {
	ID       string   `json:"id"`
	Severity string   `json:"severity"`
	Events   string   `json:"events"`
	When     string   `json:"when"`
	Effects  string   `json:"effects"`
	Inputs   []string `json:"inputs"`
}

// Rules are every rule the guard applies, from the rule table itself.
func Rules() []Rule {
	out := []Rule{}
	for _, r := range guard.Rules() {
		j := Rule{ID: r.ID, Severity: "error", Events: "issues, issue_comment", When: r.When, Effects: r.Effects, Inputs: r.Inputs}
		if r.Warning {
			j.Severity = "warning"
		}
		if r.Pull {
			j.Events = "pull_request_target, and every event on a pull request"
		}
		if r.AllEvents {
			j.Events = "every event the guard judges"
		}
		if j.Inputs == nil {
			j.Inputs = []string{}
		}
		out = append(out, j)
	}
	return out
}

// WriteRules writes the text form of `rules`: each rule, then its
// condition, effects and inputs.
func WriteRules(w io.Writer, rules []Rule) error {
	var b strings.Builder
	for _, r := range rules {
		inputs := "-"
		if len(r.Inputs) > 0 {
			inputs = strings.Join(r.Inputs, ", ")
		}
		fmt.Fprintf(&b, "%s (%s; %s)\n  when:    %s\n  effects: %s\n  inputs:  %s\n", r.ID, r.Severity, r.Events, r.When, r.Effects, inputs)
	}
	_, err := fmt.Fprint(w, b.String())
	return err
}
