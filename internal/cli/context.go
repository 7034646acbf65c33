package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gns-guard/gns-guard/internal/briefing"
	"github.com/gns-guard/gns-guard/internal/settings"
)

// dirExists reports whether a directory exists (for the default overflow
// log); tests replace it.
var dirExists = func(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// defaultOverflowLog is where cost-check warnings go when its folder
// exists and --overflow-log is not given.
const defaultOverflowLog = ".kilo/logs/context-overflow-warnings.jsonl"

// contextOptions are the parsed flags of `context`.
type contextOptions struct {
	issueFlags
	body, comments string
	files          stringList
	skill          string
	size           string
	cap            int
	fullComments   bool
	format         string
	labels         string
	labelsSet      bool
	overflowLog    string
	overflowSet    bool
	metricsFile    string
}

// contextFlags declares the flags of `context`.
func contextFlags(fs *flag.FlagSet) options {
	o := &contextOptions{}
	o.issueFlags.add(fs)
	fs.StringVar(&o.body, "body", "", "read the issue body from `FILE` (- for standard input) instead of the server")
	fs.StringVar(&o.comments, "comments", "", "with --body: a `FILE` of the issue's comments, a JSON array of {id, author, body, html_url}, "+
		"oldest first")
	fs.Var(&o.files, "file", "a file the task names, its `PATH` in the local checkout (repeatable, at most 3, in priority order)")
	fs.StringVar(&o.skill, "skill", "", "the skill to load, its `PATH` in the local checkout")
	fs.StringVar(&o.size, "size", "", "task size: `tiny|small|medium|large` (default: the size:: label, else inferred from next_estimated_tokens)")
	fs.IntVar(&o.cap, "cap", 0, "the cap in `TOKENS` (default: the task size's max context less its checkpoint overhead)")
	fs.BoolVar(&o.fullComments, "full-comments", false, "load the older agent results whole too (the previous agent's result is whole whenever "+
		"it fits the cap)")
	fs.StringVar(&o.format, "format", "text", "output format: `text|json`")
	fs.StringVar(&o.labels, "labels", "", "with --body: the issue's labels, comma-separated (`L1,L2`); --labels= for none (default: the "+
		"checkpoint's state.labels)")
	fs.StringVar(&o.overflowLog, "overflow-log", defaultOverflowLog, "append a JSON line to this `FILE` when the cost check warns (by default "+
		"only if the folder exists; \"\" for nowhere)")
	fs.StringVar(&o.metricsFile, "metrics-file", "", "append the load's context-budget record (JSON line) to this `FILE`")
	return o
}

func (o *contextOptions) validate(fs *flag.FlagSet, pos []string, _ Env) error {
	given := givenFlags(fs)
	o.labelsSet, o.overflowSet = given["labels"], given["overflow-log"]
	if given["issue"] && o.issue < 1 {
		return usageError("context: --issue must be a positive issue number, not %d", o.issue)
	}
	if len(pos) > 0 {
		return usageError("context takes no positional arguments, got: %s (name files with --file PATH)", strings.Join(pos, " "))
	}
	return briefing.Flags{Repo: o.repo, Body: o.body, Comments: o.comments, Issue: o.issue, LabelsSet: o.labelsSet,
		Files: o.files, Cap: o.cap, Size: o.size, Format: o.format}.Check()
}

// runContext prints what the next agent loads on entry, under a hard cap
// (package briefing).
func runContext(ctx context.Context, o *contextOptions, env Env) error {
	// Local input first: a bad file is known before any request.
	files, skill, err := briefing.ReadDocs(env.ReadFile, o.files, o.skill)
	if err != nil {
		return err
	}
	req, err := o.request(ctx, env)
	if err != nil {
		return err
	}
	req.Files, req.Skill, req.Size, req.Cap, req.FullComments = files, skill, o.size, o.cap, o.fullComments
	req.Fence, req.Now, req.Notes = o.format == "text" && env.Getenv("GITHUB_ACTIONS") == "true", env.Now, env.Stderr
	res, err := briefing.Assemble(ctx, req)
	if oc, ok := errors.AsType[*briefing.OverCapError](err); ok && o.format == "json" {
		_ = printRendered(env, oc.Report.JSON) // the error is the answer either way
	}
	if err != nil {
		return err
	}
	if w := res.CostWarning(); w != "" {
		logTo := overflowLogPath(o)
		where := "pass --overflow-log FILE to log it"
		if logTo != "" {
			where = "logged to " + logTo
		}
		fmt.Fprintf(env.Stderr, "gns-guard: context: warning: %s; %s\n", w, where)
		if logTo != "" {
			appendJSONLine(env, "--overflow-log", logTo, res.Overflow())
		}
	}
	if o.metricsFile != "" {
		appendJSONLine(env, "--metrics-file", o.metricsFile, res.Metrics())
	}
	if o.format == "json" {
		return printRendered(env, res.JSON)
	}
	fmt.Fprint(env.Stdout, res.Text())
	return nil
}

// printRendered prints a briefing's JSON rendering.
func printRendered(env Env, render func() ([]byte, error)) error {
	data, err := render()
	if err != nil {
		return cannotRun(err)
	}
	_, _ = env.Stdout.Write(data)
	return nil
}

// request is the issue and the configuration it is judged with: from the
// server through the one reader (the repository's configuration file, the
// issue, the tail of its timeline), or offline from --body and --comments
// with --config and the flags.
func (o *contextOptions) request(ctx context.Context, env Env) (req briefing.Request, err error) {
	if o.repo != "" {
		rd, err := o.open("context", env)
		if err != nil {
			return req, err
		}
		set, err := o.resolve(ctx, "context", env, rd)
		if err != nil {
			return req, err
		}
		req.Config = set.Config
		req.Issue, err = briefing.Read(ctx, rd, o.issue, set.Config)
		return req, err
	}
	off := briefing.Offline{Body: o.body, Comments: o.comments, Number: o.issue, LabelsSet: o.labelsSet, Guard: o.guardUser}
	if o.labelsSet {
		off.Labels = settings.ParseList(o.labels)
	}
	read := func(name string) ([]byte, error) { s, err := readInput(env, name); return []byte(s), err }
	if req.Issue, err = briefing.ReadOffline(read, off); err != nil {
		return req, err
	}
	set, err := resolveLocal("context", env, o.config, o.settings())
	req.Config = set.Config
	return req, err
}

// overflowLogPath is where a cost-check warning is logged, or "".
func overflowLogPath(o *contextOptions) string {
	if o.overflowSet {
		return o.overflowLog
	}
	if dirExists(filepath.Dir(defaultOverflowLog)) {
		return defaultOverflowLog
	}
	return ""
}

// appendJSONLine appends v as one JSON line; a failure is a warning.
func appendJSONLine(env Env, flagName, path string, v any) {
	data, err := json.Marshal(v)
	if err == nil {
		err = env.AppendFile(path, append(data, '\n'))
	}
	if err != nil {
		fmt.Fprintf(env.Stderr, "gns-guard: context: warning: cannot append to %s %s: %v\n", flagName, path, err)
	}
}
