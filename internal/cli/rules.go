package cli

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/gns-guard/gns-guard/internal/guard"
)

// ruleJSON is one rule in `rules --format json`.
type ruleJSON struct {
	ID       string   `json:"id"`
	Severity string   `json:"severity"`
	Events   string   `json:"events"`
	When     string   `json:"when"`
	Effects  string   `json:"effects"`
	Inputs   []string `json:"inputs"`
}

// rulesFlags declares the flags of `rules`.
func rulesFlags(fs *flag.FlagSet) options {
	return formatOnly(fs, "rules", "output format: `text|json`", nil)
}

// runRules lists every rule the guard applies, from the rule table itself.
func runRules(_ context.Context, o *formatOptions, env Env) error {
	rules := ruleList()
	if o.format == "json" {
		return printJSON(env, rules)
	}
	return printRules(env, rules)
}

// ruleList is the guard's rule table as `rules` shows it.
func ruleList() []ruleJSON {
	out := []ruleJSON{}
	for _, r := range guard.Rules() {
		j := ruleJSON{ID: r.ID, Severity: "error", Events: "issues, issue_comment", When: r.When, Effects: r.Effects, Inputs: r.Inputs}
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

// printRules prints the text form of `rules`: each rule, then its
// condition, effects and inputs.
func printRules(env Env, rules []ruleJSON) error {
	var b strings.Builder
	for _, r := range rules {
		inputs := "-"
		if len(r.Inputs) > 0 {
			inputs = strings.Join(r.Inputs, ", ")
		}
		fmt.Fprintf(&b, "%s (%s; %s)\n  when:    %s\n  effects: %s\n  inputs:  %s\n", r.ID, r.Severity, r.Events, r.When, r.Effects, inputs)
	}
	_, err := fmt.Fprint(env.Stdout, b.String())
	return err
}
