package posture

import (
	"fmt"
	"slices"
	"strings"
)

// Check is one threat-model guarantee, judged.
type Check struct {
	// ID names the guarantee (CheckCodeWrite, ...).
	ID string `json:"id"`
	// Holds says the guarantee holds in the repository as read.
	Holds bool `json:"holds"`
	// Why says what was found, and what to change.
	Why string `json:"why"`
	// Logins break it, sorted; empty when none do.
	Logins []string `json:"logins"`
}

// The checks, in the order Judge returns them.
const (
	CheckCodeWrite     = "accounts.code-write"
	CheckActionsWrite  = "accounts.actions-write"
	CheckAdmin         = "accounts.admin"
	CheckWorkflow      = "workflow.present"
	CheckEnabled       = "workflow.enabled"
	CheckTriggers      = "workflow.triggers"
	CheckPullTarget    = "workflow.pull-request-target"
	CheckPinned        = "workflow.pinned"
	CheckStatus        = "branch.status-check"
	CheckPush          = "branch.push"
	CheckSecrets       = "secrets.present"
	CheckPublicKey     = "config.public-key"
	noGuardWorkflowWhy = "no guard workflow on the default branch"
)

// Judge says which guarantees hold in the repository the facts describe.
// The answer depends on the facts alone: the same facts give the same
// checks, in the same order.
func Judge(f Facts) []Check {
	g := findGuard(f.Workflows)
	checks := accountChecks(f, g)
	checks = append(checks, workflowChecks(f, g)...)
	checks = append(checks, statusCheck(f, g), pushCheck(f), secretsCheck(f, g), publicKeyCheck(f))
	return checks
}

// CouldNotCheck begins the Why of a check whose facts the tokens at hand
// could not read: it does not hold, for want of knowing.
const CouldNotCheck = "could not check: "

// Unchecked gives why, without CouldNotCheck.
func (c Check) Unchecked() (string, bool) {
	if c.Holds {
		return "", false
	}
	return strings.CutPrefix(c.Why, CouldNotCheck)
}

// Holds says every check holds.
func Holds(checks []Check) bool {
	for _, c := range checks {
		if !c.Holds {
			return false
		}
	}
	return true
}

func held(id, why string) Check { return Check{ID: id, Holds: true, Why: why, Logins: []string{}} }
func broken(id, why string) Check {
	return Check{ID: id, Why: why, Logins: []string{}}
}

// workflowChecks: the guard's workflow is on the default branch, enabled,
// runs on the issue events and on pull_request_target, and names a pinned
// action.
func workflowChecks(f Facts, g *guardWorkflow) []Check {
	ids := []string{CheckWorkflow, CheckEnabled, CheckTriggers, CheckPullTarget, CheckPinned}
	if why, unread := f.Unread[FactWorkflows]; unread {
		out := make([]Check, len(ids))
		for i, id := range ids {
			out[i] = broken(id, CouldNotCheck+why)
		}
		return out
	}
	if g == nil {
		out := []Check{broken(CheckWorkflow, fmt.Sprintf("no workflow of %s has a step that uses gns-guard to guard issues: nothing "+
			"judges the issues (gns-guard init writes one)", f.DefaultBranch))}
		for _, id := range ids[1:] {
			out = append(out, broken(id, noGuardWorkflowWhy))
		}
		return out
	}
	out := []Check{held(CheckWorkflow, fmt.Sprintf("%s runs the guard (job %q)", g.wf.Path, g.jobName))}
	if g.wf.Disabled {
		out = append(out, broken(CheckEnabled, g.wf.Path+" is disabled: no event runs the guard; enable it in the repository's Actions tab"))
	} else {
		out = append(out, held(CheckEnabled, g.wf.Path+" is enabled"))
	}
	out = append(out, triggersCheck(g), pullTargetCheck(g))
	ok, why := g.pinned()
	if ok {
		out = append(out, held(CheckPinned, why))
	} else {
		out = append(out, broken(CheckPinned, why))
	}
	return out
}

func triggersCheck(g *guardWorkflow) Check {
	var gaps []string
	for _, e := range []struct {
		event string
		types []string
	}{{"issues", issueTypes}, {"issue_comment", commentTypes}} {
		if missing, _ := g.missingTypes(e.event, e.types); len(missing) > 0 {
			gaps = append(gaps, e.event+" "+strings.Join(missing, ", "))
		}
	}
	if len(gaps) > 0 {
		return broken(CheckTriggers, g.wf.Path+" does not run on "+strings.Join(gaps, "; ")+": a change then goes unjudged")
	}
	return held(CheckTriggers, g.wf.Path+" runs on every issue and comment event the guard judges")
}

func pullTargetCheck(g *guardWorkflow) Check {
	missing, ok := g.missingTypes("pull_request_target", pullTypes)
	_, plain := g.triggers["pull_request"]
	switch {
	case !ok && plain:
		return broken(CheckPullTarget, g.wf.Path+" guards pull requests on pull_request, which runs the workflow of the pull request's "+
			"own head: a pull request can drop the guard from its copy; use pull_request_target")
	case !ok:
		return broken(CheckPullTarget, g.wf.Path+" does not run on pull_request_target: pull requests go unguarded")
	case len(missing) > 0:
		return broken(CheckPullTarget, g.wf.Path+" does not run on pull_request_target "+strings.Join(missing, ", "))
	}
	why := g.wf.Path + " guards pull requests on pull_request_target: the workflow comes from the base branch"
	if plain {
		why += " (its pull_request run takes the pull request's own copy and proves nothing)"
	}
	return held(CheckPullTarget, why)
}

// statusCheck: merging waits for the guard's pull_request_target job status.
func statusCheck(f Facts, g *guardWorkflow) Check {
	b := f.Branch
	want := "the guard's check"
	if g != nil {
		want = "`" + g.statusContext() + "`"
	}
	switch {
	case !b.Protected:
		return broken(CheckStatus, fmt.Sprintf("%s is not protected: a pull request merges without %s; protect it and require %s",
			f.DefaultBranch, want, want))
	case !b.StatusCheck:
		return broken(CheckStatus, fmt.Sprintf("%s's protection requires no status check: require %s", f.DefaultBranch, want))
	case g == nil:
		return broken(CheckStatus, noGuardWorkflowWhy)
	case !slices.Contains(b.Contexts, g.statusContext()):
		return broken(CheckStatus, fmt.Sprintf("%s's protection requires %s, not %s: require that exact context (a pattern can be met "+
			"by a fork's own workflow)", f.DefaultBranch, quoted(b.Contexts), want))
	}
	return held(CheckStatus, fmt.Sprintf("merging into %s waits for %s", f.DefaultBranch, want))
}

// pushCheck: no untrusted account pushes to the default branch.
func pushCheck(f Facts) Check {
	b := f.Branch
	switch {
	case !b.Protected:
		return broken(CheckPush, f.DefaultBranch+" is not protected: every account with Code write pushes to it")
	case !b.PushKnown:
		return broken(CheckPush, CouldNotCheck+firstNonEmpty(f.Unread[FactPush], "the protection's push settings were not read"))
	case !b.Push:
		return held(CheckPush, "no one pushes to "+f.DefaultBranch+": changes come through pull requests")
	case !b.PushWhitelist:
		c := broken(CheckPush, f.DefaultBranch+"'s protection lets every account with Code write push")
		c.Logins = logins(untrusted(f, func(a *account) bool { return a.units[Code] >= Write }))
		return c
	}
	var bad []string
	for _, u := range b.PushUsers {
		if trusted(f, u) == "" {
			bad = append(bad, u)
		}
	}
	for _, t := range f.Teams {
		if slices.Contains(b.PushTeams, t.Name) {
			for _, m := range t.Members {
				if trusted(f, m) == "" && !slices.Contains(bad, m) {
					bad = append(bad, m)
				}
			}
		}
	}
	if len(bad) > 0 {
		slices.Sort(bad)
		c := broken(CheckPush, fmt.Sprintf("%s may push to %s", strings.Join(bad, ", "), f.DefaultBranch))
		c.Logins = bad
		return c
	}
	return held(CheckPush, "only trusted accounts push to "+f.DefaultBranch)
}

// secretsCheck: the workflow's secrets, ledger key included, are repository
// secrets.
func secretsCheck(f Facts, g *guardWorkflow) Check {
	if g == nil {
		return broken(CheckSecrets, noGuardWorkflowWhy)
	}
	ins := g.secretInputs()
	if _, ok := ins["ledger-key"]; !ok {
		return broken(CheckSecrets, g.wf.Path+" gives the guard no ledger-key secret: anyone who writes an issue can forge its ledger")
	}
	if why, unread := f.Unread[FactSecrets]; unread {
		return broken(CheckSecrets, CouldNotCheck+why)
	}
	var missing []string
	for _, name := range ins {
		if !slices.ContainsFunc(f.Secrets, func(s string) bool { return strings.EqualFold(s, name) }) && !slices.Contains(missing, name) {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return broken(CheckSecrets, fmt.Sprintf("the repository has no secret %s (an organisation's secret would reach every "+
			"repository's runs: set it on the repository)", quoted(missing)))
	}
	names := make([]string, 0, len(ins))
	for _, n := range ins {
		names = append(names, n)
	}
	slices.Sort(names)
	return held(CheckSecrets, "the repository holds "+quoted(slices.Compact(names)))
}

// publicKeyCheck: a published public key lets anyone verify the history.
func publicKeyCheck(f Facts) Check {
	if why, unread := f.Unread[FactConfig]; unread {
		return broken(CheckPublicKey, CouldNotCheck+why)
	}
	if f.PublicKey == "" {
		return broken(CheckPublicKey, "the settings file publishes no ledger-public-key: no one can verify the guard's history without "+
			"the secret (gns-guard pubkey prints it)")
	}
	return held(CheckPublicKey, "the settings file publishes ledger-public-key "+f.PublicKey)
}

func quoted(s []string) string {
	if len(s) == 0 {
		return "nothing"
	}
	q := make([]string, len(s))
	for i, v := range s {
		q[i] = "`" + v + "`"
	}
	return strings.Join(q, ", ")
}
