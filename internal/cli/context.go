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
	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/issues"
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
	fs.StringVar(&o.comments, "comments", "", "with --body: a `FILE` of the issue's comments, a JSON array of {id, author, body, html_url}, oldest first")
	fs.Var(&o.files, "file", "a file the task names, its `PATH` in the local checkout (repeatable, at most 3, in priority order)")
	fs.StringVar(&o.skill, "skill", "", "the skill to load, its `PATH` in the local checkout")
	fs.StringVar(&o.size, "size", "", "task size: `tiny|small|medium|large` (default: the size:: label, else inferred from next_estimated_tokens)")
	fs.IntVar(&o.cap, "cap", 0, "the cap in `TOKENS` (default: the task size's max context less its checkpoint overhead)")
	fs.BoolVar(&o.fullComments, "full-comments", false, "load the older agent results whole too (the previous agent's result is whole whenever it fits the cap)")
	fs.StringVar(&o.format, "format", "text", "output format: `text|json`")
	fs.StringVar(&o.labels, "labels", "", "with --body: the issue's labels, comma-separated (`L1,L2`); --labels= for none (default: the checkpoint's state.labels)")
	fs.StringVar(&o.overflowLog, "overflow-log", defaultOverflowLog, "append a JSON line to this `FILE` when the cost check warns (by default only if the folder exists; \"\" for nowhere)")
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
	if err := o.checkSource(); err != nil {
		return err
	}
	if err := o.checkLimits(); err != nil {
		return err
	}
	if err := o.checkFiles(); err != nil {
		return err
	}
	return o.checkRepo()
}

// checkSource checks that the flags name one issue: on the server, or
// offline.
func (o *contextOptions) checkSource() error {
	switch {
	case o.repo != "" && o.body != "":
		return usageError("context: give either --repo OWNER/NAME --issue N (read the server) or --body FILE (offline), not both")
	case o.repo == "" && o.body == "":
		return usageError("context: say which issue: --repo OWNER/NAME --issue N, or --body FILE [--comments FILE] offline")
	case o.comments != "" && o.body == "":
		return usageError("context: --comments goes with --body; with --repo the comments are read from the server")
	case o.labelsSet && o.body == "":
		return usageError("context: --labels goes with --body; with --repo the live labels are read")
	}
	return nil
}

// checkLimits checks the numbers and the format.
func (o *contextOptions) checkLimits() error {
	switch {
	case len(o.files) > briefing.MaxFiles:
		return usageError("context: %d files named with --file; an agent loads at most %d (the protocol's limit): name the %d the task needs most", len(o.files), briefing.MaxFiles, briefing.MaxFiles)
	case o.cap < 0:
		return usageError("context: --cap must be a positive number of tokens, not %d", o.cap)
	case o.format != "text" && o.format != "json":
		return usageError("context: --format must be text or json, not %q", o.format)
	case o.issue < 0:
		return usageError("context: --issue must be a positive issue number, not %d", o.issue)
	}
	return nil
}

// checkFiles refuses a file named twice and an unknown --size.
func (o *contextOptions) checkFiles() error {
	seen := map[string]bool{}
	for _, f := range o.files {
		if seen[filepath.Clean(f)] {
			return usageError("context: --file %s is named twice", f)
		}
		seen[filepath.Clean(f)] = true
	}
	if o.size != "" {
		if _, ok := issues.TaskSizeNamed(o.size); !ok {
			return usageError("context: --size must be tiny, small, medium or large, not %q", o.size)
		}
	}
	return nil
}

// checkRepo checks --repo and --issue, when the issue is read from the
// server.
func (o *contextOptions) checkRepo() error {
	if o.repo == "" {
		return nil
	}
	owner, name, ok := strings.Cut(o.repo, "/")
	switch {
	case !ok || owner == "" || name == "" || strings.Contains(name, "/"):
		return usageError("context: --repo must be OWNER/NAME, not %q", o.repo)
	case o.issue < 1:
		return usageError("context: --issue N (a positive issue number) is required with --repo")
	}
	return nil
}

// runContext prints what the next agent loads on entry, under a hard cap
// (package briefing).
func runContext(ctx context.Context, o *contextOptions, env Env) error {
	// Local input first: a bad file is known before any request.
	files, skill, err := briefing.ReadDocs(env.ReadFile, o.files, o.skill)
	if err != nil {
		return err
	}
	iss, cfg, err := readContextIssue(ctx, env, o)
	if err != nil {
		return err
	}
	res, err := briefing.Assemble(ctx, briefing.Request{Issue: iss, Config: cfg, Files: files, Skill: skill, Size: o.size, Cap: o.cap,
		FullComments: o.fullComments, Fence: o.format == "text" && env.Getenv("GITHUB_ACTIONS") == "true", Now: env.Now, Notes: env.Stderr})
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

// readContextIssue resolves the configuration and reads the issue: from
// the server through the one reader (the repository's configuration file,
// the issue, the tail of its timeline), or offline from --body and
// --comments with --config and the flags.
func readContextIssue(ctx context.Context, env Env, o *contextOptions) (briefing.Issue, config.Config, error) {
	if o.repo != "" {
		rd, _, err := o.open("context", env)
		if err != nil {
			return briefing.Issue{}, config.Config{}, err
		}
		set, err := o.resolve(ctx, "context", env, rd)
		if err != nil {
			return briefing.Issue{}, config.Config{}, err
		}
		iss, err := briefing.Read(ctx, rd, o.issue, set.Config)
		return iss, set.Config, err
	}
	off := briefing.Offline{Body: o.body, Comments: o.comments, Number: o.issue, LabelsSet: o.labelsSet, Guard: firstOf(o.guardUser, issues.ActionsUser)}
	if o.labelsSet {
		off.Labels = config.ParseList(o.labels)
	}
	read := func(name string) ([]byte, error) { s, err := readInput(env, name); return []byte(s), err }
	iss, err := briefing.ReadOffline(read, off)
	if err != nil {
		return iss, config.Config{}, err
	}
	var layers []settings.Layer
	if o.config != "" {
		l, err := localConfig(env, o.config)
		if err != nil {
			return iss, config.Config{}, err
		}
		layers = append(layers, l)
	}
	set, err := settings.Resolve(append(layers, o.settings())...)
	if err != nil {
		return iss, config.Config{}, usageError("context: %v", err)
	}
	return iss, set.Config, nil
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
