package cli

import (
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

// runRules lists every rule the guard applies, from the rule table itself.
func runRules(args []string, env Env) error {
	fs := newFlags("rules", env, "rules [--format text|json]")
	format := fs.String("format", "text", "output format: text or json")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError("rules takes no arguments")
	}
	if err := checkFormat("rules", *format); err != nil {
		return err
	}
	out := []ruleJSON{}
	for _, r := range guard.Rules() {
		j := ruleJSON{ID: r.ID, Severity: "error", Events: "issues, issue_comment", When: r.When, Effects: r.Effects, Inputs: r.Inputs}
		if r.Warning {
			j.Severity = "warning"
		}
		if r.Pull {
			j.Events = "pull_request"
		}
		if j.Inputs == nil {
			j.Inputs = []string{}
		}
		out = append(out, j)
	}
	if *format == "json" {
		return printJSON(env, out)
	}
	var b strings.Builder
	for _, r := range out {
		inputs := "-"
		if len(r.Inputs) > 0 {
			inputs = strings.Join(r.Inputs, ", ")
		}
		fmt.Fprintf(&b, "%s (%s; %s)\n  when:    %s\n  effects: %s\n  inputs:  %s\n", r.ID, r.Severity, r.Events, r.When, r.Effects, inputs)
	}
	_, err = fmt.Fprint(env.Stdout, b.String())
	return err
}
