package cli

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/gns-guard/gns-guard/internal/agentwrite"
	"github.com/gns-guard/gns-guard/internal/live"
	"github.com/gns-guard/gns-guard/internal/settings"
)

// reportOptions are the parsed flags of `report`.
type reportOptions struct {
	issueFlags
	req         agentwrite.ReportRequest
	depth       int64
	assignee    string
	currentTask string
	resultFile  string
	// labelsAdd and labelsRemove are the flags' lists, comma-separated.
	labelsAdd, labelsRemove string
	dryRun                  bool
	force                   bool
	format                  string
}

// reportFlags declares the flags of `report`.
func reportFlags(fs *flag.FlagSet) options {
	o := &reportOptions{}
	o.issueFlags.add(fs)
	r := &o.req.Report
	fs.StringVar(&r.Agent, "agent", "", "the agent's `NAME` (the header's {agent}; no spaces)")
	fs.StringVar(&r.Invocation, "invocation", "", "this invocation's `ID`: a re-run with the same id writes nothing twice")
	fs.Int64Var(&r.Consumed, "consumed", -1, "the `TOKENS` this invocation used")
	fs.StringVar(&r.Action, "action", "", "what the agent did, as `TEXT` (the first line becomes the history entry)")
	fs.StringVar(&r.Status, "status", "ok", "how the invocation ended: `ok|failed`")
	fs.StringVar(&r.Verdict, "verdict", "", "the agent's verdict, as `TEXT` (default: the status)")
	fs.Int64Var(&r.FilesChanged, "files-changed", 0, "how many files the agent changed")
	fs.StringVar(&r.KeyStats, "key-stats", "", "key figures: `TEXT`, or a JSON object")
	fs.StringVar(&r.NextAgent, "next-agent", "", "the agent to run next, its `NAME` (with --next-estimate; none: the workflow is done)")
	fs.Int64Var(&r.NextEstimate, "next-estimate", -1, "the next agent's estimated `TOKENS`")
	fs.StringVar(&o.resultFile, "result-file", "", "a `FILE` whose content is the comment's Result section (JSON shown as JSON)")
	fs.StringVar(&r.Phase, "phase", "", "move the checkpoint to this `PHASE` (default: keep it)")
	fs.Int64Var(&o.depth, "depth", -1, "move the checkpoint to this depth (default: keep it)")
	fs.StringVar(&o.labelsAdd, "labels-add", "", "labels to add, comma-separated: `L1,L2`")
	fs.StringVar(&o.labelsRemove, "labels-remove", "", "labels to remove, comma-separated: `L1,L2`")
	fs.StringVar(&o.assignee, "assignee", "", "hand the issue to this user, by `LOGIN`: state.assignee and the issue's assignee (default: "+
		"state.assignee becomes --next-agent)")
	fs.StringVar(&o.currentTask, "current-task", "", "set current_task to `TEXT`: the task the next agent takes up")
	fs.BoolVar(&o.dryRun, "dry-run", false, "print what would be written and write nothing")
	fs.BoolVar(&o.force, "force", false, "write even when the guard would fail the new state (the guard then fails the run)")
	fs.StringVar(&o.format, "format", "text", "output format: `text|json`")
	return o
}

func (o *reportOptions) validate(fs *flag.FlagSet, pos []string, env Env) error {
	if err := noPositional("report", pos); err != nil {
		return err
	}
	given := givenFlags(fs)
	if err := o.req.CheckDone(); err != nil {
		return err
	}
	if err := o.checkNext(given); err != nil {
		return err
	}
	o.fillReport(given)
	if err := o.checkLabels(); err != nil {
		return err
	}
	if o.resultFile == "" {
		return nil
	}
	text, err := readText(env, "report", "result file", o.resultFile, agentwrite.MaxResultBytes)
	if err != nil {
		return err
	}
	o.req.Report.Result = text
	return nil
}

// checkNext checks what comes next: the next agent, the phase and depth,
// and the format.
func (o *reportOptions) checkNext(given map[string]bool) error {
	switch {
	case given["next-agent"] != given["next-estimate"]:
		return usageError("report: --next-agent and --next-estimate go together (neither: the workflow is done)")
	case given["next-estimate"] && o.req.Report.NextEstimate < 0:
		return usageError("report: --next-estimate must be >= 0")
	}
	if err := o.req.CheckNames(); err != nil {
		return err
	}
	switch {
	case given["depth"] && (o.depth < 0 || o.depth > maxDepthFlag):
		return usageError("report: --depth must be a whole number from 0 to %d, not %d", maxDepthFlag, o.depth)
	case o.format != "text" && o.format != "json":
		return usageError("report: --format must be text or json, not %q", o.format)
	case given["current-task"] && strings.TrimSpace(o.currentTask) == "":
		return usageError("report: --current-task must say the task the next agent takes up")
	}
	return nil
}

// maxDepthFlag bounds report's --depth: agent_chain holds an agent per
// level, and a checkpoint (64 KiB by default) could not hold more.
const maxDepthFlag = 10000

// fillReport puts into the report what the flags given imply: no next
// estimate, a new depth, an assignee, the label changes.
func (o *reportOptions) fillReport(given map[string]bool) {
	r := &o.req.Report
	if !given["next-estimate"] {
		r.NextEstimate = 0
	}
	if given["depth"] {
		r.Depth = &o.depth
	}
	if given["assignee"] {
		a := o.assignee
		r.Assignee = &a
	}
	if given["current-task"] {
		task := strings.TrimSpace(o.currentTask)
		r.CurrentTask = &task
	}
	r.LabelsAdd, r.LabelsRemove = settings.ParseList(o.labelsAdd), settings.ParseList(o.labelsRemove)
}

// checkLabels refuses a label both added and removed.
func (o *reportOptions) checkLabels() error {
	for _, l := range o.req.Report.LabelsAdd {
		if slices.Contains(o.req.Report.LabelsRemove, l) {
			return usageError("report: label %q is both added and removed", l)
		}
	}
	return nil
}

// runReport performs the agents' exit protocol (package agentwrite) and
// prints what it did.
func runReport(ctx context.Context, o *reportOptions, env Env) error {
	conn, err := o.connect(ctx, env)
	if err != nil {
		return err
	}
	req := o.req
	req.Issue, req.DryRun, req.Force = o.issue, o.dryRun, o.force
	if conn.Config.Gated() {
		return reportThroughGate(ctx, o, conn, req, env)
	}
	req.MeterToken, _ = live.Token(o.token, env.Getenv)
	req.Held = live.Held(o.token, env.Getenv, o.heldEnv()...)
	res, err := agentwrite.Report(ctx, conn, req)
	agentwrite.WriteUnreadable(env.Stderr, err, o.issue)
	if res == nil {
		return err
	}
	return printReport(env, o, res, err)
}

// connect checks the flags, connects, resolves the configuration and
// looks up the token's user.
func (o *reportOptions) connect(ctx context.Context, env Env) (agentwrite.Conn, error) {
	reader, err := o.open("report", env)
	if err != nil {
		return agentwrite.Conn{}, err
	}
	set, err := o.resolve(ctx, "report", env, reader)
	if err != nil {
		return agentwrite.Conn{}, err
	}
	conn := agentwrite.Conn{Reader: reader, Client: reader.Client, Config: set.Config, Now: env.Now}
	if conn.Config.Gated() {
		return conn, nil // the gate counts, and writes as its own user
	}
	if err := conn.Count(); err != nil {
		return agentwrite.Conn{}, err
	}
	if conn.Self, err = reader.Client.Self(ctx); err != nil {
		return agentwrite.Conn{}, reader.Where.Error("look up the token's user", err)
	}
	return conn, nil
}

// printReport prints what `report` did; err is returned as is.
func printReport(env Env, o *reportOptions, res *agentwrite.ReportResult, err error) error {
	if o.format == "json" {
		if jerr := printIndented(env, res); jerr != nil {
			return jerr
		}
		if err != nil {
			for _, f := range res.Findings {
				fmt.Fprintln(env.Stderr, f.Format(fmt.Sprintf("issue#%d", res.Issue)))
			}
		}
		return err
	}
	// Agents' text is in it: inside Gitea Actions it goes between
	// stop-commands markers.
	var b strings.Builder
	res.WriteText(&b)
	printUntrusted(env, b.String())
	return err
}

// reportThroughGate sends the report to the gate, which judges and
// writes it (docs/gate.md#report): the agent's token reads only.
func reportThroughGate(ctx context.Context, o *reportOptions, conn agentwrite.Conn, req agentwrite.ReportRequest, env Env) error {
	token, _ := live.Token(o.token, env.Getenv)
	gate, err := agentwrite.GateOf("report", conn, token)
	if err != nil {
		return err
	}
	res, err := gate.Report(ctx, req)
	if res == nil {
		return err
	}
	return printReport(env, o, res, err)
}
