package cli

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/finding"
	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/prune"
)

// pruneReport is the JSON form of `prune`.
type pruneReport struct {
	Body      string       `json:"body"`
	Archives  []string     `json:"archives"`
	SHA256    string       `json:"sha256"`
	Removed   int          `json:"removed"`
	Budget    prune.Budget `json:"budget"`
	NewBudget prune.Budget `json:"new_budget"`
	OldBytes  int          `json:"old_bytes"`
	NewBytes  int          `json:"new_bytes"`
	Grew      bool         `json:"grew"`
}

// runPrune prints what pruning makes of a body: the new body, then the
// archive comment(s) the action would post first. It reads and writes no
// issue. The labels written to state.labels are the checkpoint's own unless
// --labels gives the live ones.
func runPrune(args []string, env Env) error {
	def := prune.DefaultConfig()
	fs := newFlags("prune", env, "prune FILE|- [flags]")
	format := fs.String("format", "text", "output format: text (the body, then each archive after a '--- archive part i/n ---' line) or json")
	tail := fs.Int("history-tail", def.TailLimit, "history entries the body keeps")
	ratio := fs.Float64("carryover-ratio", def.CarryoverRatio, "share of the remaining budget the new phase keeps, 0 to 1")
	grant := fs.Int64("phase-grant", def.PhaseGrant, "tokens added to the new phase budget")
	nowFlag := fs.String("now", "", "RFC 3339 time stamped on tail entries that lack one (default: now)")
	labels := fs.String("labels", "", "the issue's live labels, comma-separated, for state.labels (default: the checkpoint's own)")
	issue := fs.Int64("issue", 0, "the issue's number; checkpoint.issue must match it (0: take it from the checkpoint)")
	maxBytes := fs.Int("max-checkpoint-bytes", checkpoint.DefaultMaxBytes, "largest checkpoint block that is parsed")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	name, err := oneArg("prune", pos)
	if err != nil {
		return err
	}
	switch {
	case *format != "text" && *format != "json":
		return usageError("prune: --format must be text or json, not %q", *format)
	case *tail < 1 || *maxBytes < 1:
		return usageError("prune: --history-tail and --max-checkpoint-bytes must be positive")
	case !(*ratio >= 0 && *ratio <= 1):
		return usageError("prune: --carryover-ratio must lie between 0 and 1, not %v", *ratio)
	case *grant < 0:
		return usageError("prune: --phase-grant must be >= 0, not %d", *grant)
	}
	now := env.Now().UTC()
	if *nowFlag != "" {
		if now, err = time.Parse(time.RFC3339, *nowFlag); err != nil {
			return usageError("prune: --now must be an RFC 3339 time such as 2026-05-16T13:20:00Z, not %q", *nowFlag)
		}
	}
	body, err := readInput(env, name)
	if err != nil {
		return err
	}
	source := name
	if name == "-" {
		source = "stdin"
	}

	done, cancel := deadline()
	defer cancel()
	parsed := checkpoint.Parse(body, checkpoint.Options{Issue: *issue, MaxBytes: *maxBytes, TailLimit: *tail, Done: done})
	if !parsed.Valid() {
		found := parsed.Findings
		if len(parsed.Blocks) == 0 {
			found = append(found, finding.Finding{
				Rule: checkpoint.RuleMissing, Severity: finding.Error, Line: 1, Col: 1,
				Message: "no checkpoint block found: expected a ```yaml fenced block whose root key is checkpoint (run 'gns-guard schema' for its shape)",
			})
		}
		for _, f := range finding.Sort(found) {
			fmt.Fprintln(env.Stdout, f.Format(source))
		}
		fmt.Fprintf(env.Stderr, "%s: the checkpoint is not valid; a body that cannot be trusted is never pruned\n", source)
		return errViolations
	}
	var live []string
	for _, l := range parsed.Checkpoint.State.Labels.Items {
		live = append(live, l.Value)
	}
	if *labels != "" {
		live = guard.ParseList(*labels)
	}
	cfg := def
	cfg.TailLimit, cfg.CarryoverRatio, cfg.PhaseGrant = *tail, *ratio, *grant
	res, err := prune.Plan(body, parsed, *issue, live, now, cfg)
	if err != nil {
		return cannotRun(err)
	}
	if res.Grew {
		fmt.Fprintf(env.Stderr, "%s: warning: the pruned body is not smaller (%d → %d bytes); the action would write nothing\n", source, res.OldBytes, res.NewBytes)
	}
	if *format == "json" {
		rep := pruneReport{
			Body: res.Body, Archives: res.Archives, SHA256: res.SHA256, Removed: res.Removed,
			Budget: res.Budget, NewBudget: res.NewBudget, OldBytes: res.OldBytes, NewBytes: res.NewBytes, Grew: res.Grew,
		}
		if rep.Archives == nil {
			rep.Archives = []string{}
		}
		out, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return cannotRun(err)
		}
		fmt.Fprintf(env.Stdout, "%s\n", out)
		return nil
	}
	var b strings.Builder
	b.WriteString(res.Body)
	if !strings.HasSuffix(res.Body, "\n") {
		b.WriteByte('\n')
	}
	for i, a := range res.Archives {
		fmt.Fprintf(&b, "--- archive part %d/%d ---\n", i+1, len(res.Archives))
		b.WriteString(a)
	}
	printUntrusted(env, b.String())
	return nil
}

// printUntrusted prints text that holds issue content. Inside Actions
// (GITHUB_ACTIONS=true) the runner would obey workflow commands in it, so
// it is fenced with ::stop-commands::<random token> and ::<token>::.
func printUntrusted(env Env, text string) {
	if env.Getenv("GITHUB_ACTIONS") != "true" {
		fmt.Fprint(env.Stdout, text)
		return
	}
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported systems
	}
	token := "gns-guard-" + hex.EncodeToString(b)
	fmt.Fprintf(env.Stdout, "::stop-commands::%s\n", token)
	fmt.Fprint(env.Stdout, text)
	if !strings.HasSuffix(text, "\n") {
		fmt.Fprintln(env.Stdout)
	}
	fmt.Fprintf(env.Stdout, "::%s::\n", token)
}
