package cli

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"time"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/finding"
	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/settings"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

// checkReport is the JSON form of `check`.
type checkReport struct {
	File     string            `json:"file"`
	Valid    bool              `json:"valid"`
	Errors   int               `json:"errors"`
	Warnings int               `json:"warnings"`
	Findings []finding.Finding `json:"findings"`
	Labels   []string          `json:"labels"`
	Plan     []string          `json:"plan"`
	Numbers  *guard.Numbers    `json:"numbers,omitempty"`
}

// checkOptions are the parsed flags and FILE of `check`.
type checkOptions struct {
	offlineOptions
}

// checkFlags declares the flags of `check`.
func checkFlags(fs *flag.FlagSet) options {
	o := &checkOptions{}
	o.declare(fs, "output format: `text|json`",
		"the issue's labels, comma-separated (`L1,L2`); --labels= says it has none (default: the checkpoint's state.labels)")
	return o
}

func (o *checkOptions) validate(fs *flag.FlagSet, pos []string, env Env) error {
	return o.validateOffline("check", fs, pos, env)
}

// runCheck validates a body (or a bare checkpoint) and runs the guard's
// decision on it offline: the labels are the checkpoint's state.labels
// unless --labels names the live ones, and there are no comments.
func runCheck(ctx context.Context, o *checkOptions, env Env) error {
	body, counter, err := o.read(env, o.config.Encoding)
	if err != nil {
		return err
	}
	done, cancel := deadline(ctx)
	defer cancel()
	rep, line := check(o.input(body, counter, env.Now().UTC(), done))
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := printCheck(env, o.format, rep, line); err != nil {
		return err
	}
	if !rep.Valid {
		return errViolations
	}
	return nil
}

// printCheck prints what check found: the JSON report, or a line per
// finding and planned write, then the summary line.
func printCheck(env Env, format string, rep checkReport, line string) error {
	if format == "json" {
		return printJSON(env, rep)
	}
	for _, f := range rep.Findings {
		fmt.Fprintln(env.Stdout, f.Format(rep.File))
	}
	for _, w := range rep.Plan {
		fmt.Fprintf(env.Stdout, "%s: the action would %s\n", rep.File, w)
	}
	if rep.Valid {
		fmt.Fprintf(env.Stdout, "%s: %s\n", rep.File, line)
	} else {
		fmt.Fprintf(env.Stderr, "%s: %s, %s\n", rep.File, plural(rep.Errors, "error"), plural(rep.Warnings, "warning"))
	}
	return nil
}

// offlineOptions are the flags check and prune share: the FILE and
// --format, the issue's number, its live labels and the configuration to
// judge with.
type offlineOptions struct {
	fileOptions
	issue      int64
	labelsFlag string
	// labels are the live labels --labels gives: nil when it is not given.
	labels []string
	// resolve reads --config and the settings' flags into config.
	resolve func(verb string, env Env) (config.Config, error)
	config  config.Config
}

// declare declares the flags of an offline verb, with its own help for
// --format and --labels.
func (o *offlineOptions) declare(fs *flag.FlagSet, formatHelp, labelsHelp string) {
	fs.StringVar(&o.format, "format", "text", formatHelp)
	fs.Int64Var(&o.issue, "issue", 0, "the issue's number; checkpoint.issue must match it (0: take it from the checkpoint)")
	fs.StringVar(&o.labelsFlag, "labels", "", labelsHelp)
	o.resolve = offlineConfigFlags(fs)
}

// validateOffline takes the FILE, checks --format, resolves the
// configuration and reads --labels.
func (o *offlineOptions) validateOffline(verb string, fs *flag.FlagSet, pos []string, env Env) error {
	if err := o.validateFile(verb, pos); err != nil {
		return err
	}
	if givenFlags(fs)["issue"] && o.issue < 1 {
		return usageError("%s: --issue must be a positive issue number, not %d (leave it out to take the checkpoint's)", verb, o.issue)
	}
	cfg, err := o.resolve(verb, env)
	if err != nil {
		return err
	}
	o.config = cfg
	o.labels = liveLabels(fs, o.labelsFlag)
	return nil
}

// input is what the offline decision reads of the options and the body.
func (o *offlineOptions) input(body string, counter *tokens.Counter, now time.Time, done <-chan struct{}) offlineInput {
	return offlineInput{
		Source:  o.source(),
		Body:    body,
		Issue:   o.issue,
		Labels:  o.labels,
		Config:  o.config,
		Counter: counter,
		Now:     now,
		Done:    done,
	}
}

// offlineInput is everything an offline decision reads: no flags, files
// or clock.
type offlineInput struct {
	Source  string   // the name findings are reported under
	Body    string   // the issue body (or a bare checkpoint)
	Issue   int64    // the issue's number; 0: the checkpoint's own
	Labels  []string // the live labels (empty: none); nil: the checkpoint's state.labels
	Config  config.Config
	Counter *tokens.Counter
	Now     time.Time
	Done    <-chan struct{} // the parse deadline
}

// offline is the guard's decision on a body made offline, as check and
// prune make it.
type offline struct {
	parsed checkpoint.Result
	plan   *guard.Plan
	labels []string // the labels judged: --labels, else state.labels
	number int64    // the issue's number: the given one, else the checkpoint's
}

// decideOffline runs the guard's decision on a body offline: the labels
// are the given live ones, else the checkpoint's own record of them, and
// there are no comments and no ledger.
func decideOffline(o offlineInput) offline {
	cfg, body := o.Config, o.Body
	d := offline{number: o.Issue}
	d.parsed = checkpoint.Parse(body, checkpoint.Options{Issue: o.Issue, MaxBytes: cfg.MaxCheckpointBytes, TailLimit: cfg.HistoryTail, Done: o.Done})
	labelsKnown := o.Labels != nil
	if cp := d.parsed.Checkpoint; cp != nil {
		if d.number == 0 && cp.Issue.Set {
			d.number = cp.Issue.Value
		}
		for _, l := range cp.State.Labels.Items {
			d.labels = append(d.labels, l.Value)
		}
		labelsKnown = labelsKnown || cp.State.Labels.Set
	}
	if o.Labels != nil {
		d.labels = o.Labels
	}
	in := guard.Input{
		Config:  cfg,
		Issue:   issues.Issue{Number: d.number, Body: body},
		Event:   issues.Event{Name: "issues", Action: "opened", Number: d.number},
		Now:     o.Now,
		Counter: o.Counter,
		Done:    o.Done,
		// Offline, the labels are the checkpoint's own record of them.
		LabelsUnknown: !labelsKnown,
	}
	for i, l := range d.labels {
		in.Issue.Labels = append(in.Issue.Labels, issues.Label{ID: int64(i + 1), Name: l})
	}
	d.plan = guard.Decide(in)
	return d
}

// check runs the guard's decision on a body offline and reports it, with
// the one line a clean check prints. It judges as the action does: an
// over-long history_tail, which the action repairs by pruning, is a
// warning next to the planned prune.
func check(o offlineInput) (checkReport, string) {
	cfg := o.Config
	d := decideOffline(o)
	plan, labelList := d.plan, d.labels
	found := plan.Findings()
	rep := checkReport{File: o.Source, Findings: finding.Sort(found), Errors: finding.Errors(found), Labels: labelList, Plan: describePlan(plan, cfg)}
	rep.Warnings = len(found) - rep.Errors
	rep.Valid = rep.Errors == 0
	if plan.Governed {
		rep.Numbers = &plan.Numbers
	}
	if rep.Findings == nil {
		rep.Findings = []finding.Finding{}
	}
	if rep.Labels == nil {
		rep.Labels = []string{}
	}
	if !plan.Governed {
		// As the action: nothing to govern, nothing to write, exit 0.
		return rep, "not governed: no checkpoint block (a ```yaml fenced block whose root key is checkpoint; 'gns-guard schema' shows its shape) and no cascade:: or budget:: label, so the action passes and writes nothing"
	}
	return rep, summary(d.parsed.Checkpoint, plan)
}

// describePlan lists the writes the action would make for a plan, in the
// words a dry run logs them with. Offline, whether the status comment
// exists is unknown.
func describePlan(p *guard.Plan, cfg config.Config) []string {
	out := []string{}
	for _, w := range p.Writes() {
		out = append(out, w.Planned())
	}
	if r := p.Prune; r != nil && r.NewBudget != r.Budget {
		out = append(out, fmt.Sprintf("start a new phase budget with the prune: total %d, consumed %d, remaining %d (was %d of %d left: remaining × carryover-ratio + phase-grant)",
			r.NewBudget.Total, r.NewBudget.Consumed, r.NewBudget.Remaining, r.Budget.Remaining, r.Budget.Total))
	}
	if p.Governed && !p.Resolved {
		out = append(out, "post or update the status comment")
	}
	if p.Failed(cfg) {
		out = append(out, "fail the job")
	}
	return out
}

// liveLabels is the list a --labels flag gives: nil when the flag was not
// given (the checkpoint's state.labels stand in for the live labels), and
// empty when it was given empty (the issue has no labels).
func liveLabels(fs *flag.FlagSet, value string) []string {
	if !givenFlags(fs)["labels"] {
		return nil
	}
	return append([]string{}, config.ParseList(value)...)
}

// summary is the one line a clean check prints.
func summary(cp *checkpoint.Checkpoint, p *guard.Plan) string {
	if cp == nil {
		return "ok"
	}
	next := cp.NextAgent.Value
	if next == "" {
		next = "(done)"
	}
	n := p.Numbers
	issue := strconv.FormatInt(cp.Issue.Value, 10)
	if f := p.Fill; f != nil && f.Number > 0 {
		issue = fmt.Sprintf("%d (from the template's placeholder 0, which the guard's first run sets)", f.Number)
	} else if f != nil {
		issue = "0 (the template's placeholder: the guard's first run on the issue sets its number)"
	}
	return fmt.Sprintf("ok: issue %s, phase %s, depth %d, budget %d of %d left, next %s (~%d tokens), entry context %d of %d tokens (%s task)",
		issue, strconv.Quote(cp.Phase.Value), cp.Depth.Value, cp.Budget.Remaining.Value, cp.Budget.Total.Value, strconv.Quote(next), cp.NextEstimatedTokens.Value,
		n.ContextTokens, n.MaxContext, n.TaskSize)
}

// offlineConfigFlags declares the flags of a verb that judges a body
// offline: --config FILE (a configuration file, as the repository's
// .gitea/gns-guard.yml) and a flag per setting of the table, which override
// the file. The returned function resolves them into the guard's Config.
func offlineConfigFlags(fs *flag.FlagSet) func(verb string, env Env) (config.Config, error) {
	file := fs.String("config", "", "a configuration `FILE` to judge with, as the repository's "+settings.FileName)
	flags := settings.Flags(fs)
	return func(verb string, env Env) (config.Config, error) {
		var layers []settings.Layer
		if *file != "" {
			l, err := localConfig(env, *file)
			if err != nil {
				return config.Config{}, err
			}
			layers = append(layers, l)
		}
		set, err := settings.Resolve(append(layers, flags())...)
		if err != nil {
			return set.Config, usageError("%s: %v", verb, err)
		}
		return set.Config, nil
	}
}
