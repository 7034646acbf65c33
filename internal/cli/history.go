package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/live"
	"github.com/gns-guard/gns-guard/internal/prune"
)

// historyEntry is one entry of `history`'s output.
type historyEntry struct {
	Seq        int    `json:"seq" yaml:"seq"`
	Agent      string `json:"agent" yaml:"agent"`
	Action     string `json:"action" yaml:"action"`
	Invocation string `json:"invocation,omitempty" yaml:"invocation,omitempty"`
	Timestamp  string `json:"timestamp,omitempty" yaml:"timestamp,omitempty"`
	// Source is "archive" (Comment names the archive comment) or
	// "checkpoint" (the issue body's history_tail or history).
	Source  string `json:"source" yaml:"source"`
	Comment int64  `json:"comment,omitempty" yaml:"comment,omitempty"`
}

// runHistory rebuilds an issue's full history from its archive comments
// and the checkpoint's current tail, and prints it in order. It proves the
// archive chain from the first part to the one the guard's ledger records
// (with --ledger-key-env, every signature too). Problems (unreadable
// archives, an archive edited, deleted or reordered, a chain that cannot be
// proven) go to standard error, naming the comment, and exit 1. With
// --verify it checks every signature with the published public key
// instead, holding no secret, and prints a one-line summary (see
// history_verify.go).
func runHistory(ctx context.Context, args []string, env Env) error {
	var f issueFlags
	fs := newFlags("history", env, "history --repo OWNER/NAME --issue N [flags]")
	f.add(fs)
	format := fs.String("format", "yaml", "output format: yaml or json")
	trust := fs.String("trust", "", "the same as --guard-user: the login whose archive comments are trusted")
	noVerify := fs.Bool("no-verify", false, "read the archives without proving their chain (archives are checked by their hash only, ordered by comment id)")
	verify := fs.Bool("verify", false, "check every signature (the ledger record and every archive part) with the repository's published ledger-public-key, holding no secret, and print a one-line summary instead of the history")
	var publicKeys stringList
	fs.Var(&publicKeys, "public-key", "a public key (ed25519:..., as gns-guard pubkey prints it) --verify checks with instead of ledger-public-key; repeat it for a key rotated out")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) > 0:
		return usageError("history takes no positional arguments, got: %s", strings.Join(pos, " "))
	case *format != "yaml" && *format != "json":
		return usageError("history: --format must be yaml or json, not %q", *format)
	case *noVerify && f.ledgerKeyEnv != "":
		return usageError("history: --no-verify and --ledger-key-env exclude each other")
	case *verify && *noVerify:
		return usageError("history: --verify and --no-verify exclude each other")
	case *verify && f.ledgerKeyEnv != "":
		return usageError("history: --verify checks with the public key and needs no secret: drop --ledger-key-env (or drop --verify to check with the secret)")
	case len(publicKeys) > 0 && !*verify:
		return usageError("history: --public-key is what --verify checks with: add --verify")
	case *trust != "" && f.guardUser != "" && *trust != f.guardUser:
		return usageError("history: --trust %s and --guard-user %s name different users", *trust, f.guardUser)
	}
	f.guardUser = firstOf(f.guardUser, *trust)
	rd, _, err := f.open("history", env)
	if err != nil {
		return err
	}
	if *verify {
		if rd.Keys, err = verifyKeys(ctx, &f, env, rd, publicKeys); err != nil {
			return err
		}
	}
	s, err := rd.Read(ctx, f.issue, live.ReadOptions{All: true})
	if err != nil {
		return err
	}
	iss, comments, trusted := s.Issue, s.Comments(), s.Guard
	issue := &f.issue

	var problems []string
	done, cancel := deadline()
	defer cancel()
	parsed := checkpoint.Parse(iss.Body, checkpoint.Options{Issue: *issue, Done: done})
	var tail []prune.Entry
	switch {
	case parsed.Checkpoint == nil && len(parsed.Blocks) == 0:
		problems = append(problems, "the issue body has no checkpoint block: the history ends with the archives")
	case parsed.Checkpoint == nil:
		problems = append(problems, "the issue body's checkpoint cannot be read (run 'gns-guard check'): the history ends with the archives")
	default:
		if !parsed.Valid() {
			problems = append(problems, "the issue body's checkpoint has errors (run 'gns-guard check'); its entries are included as read")
		}
		tail = prune.FromCheckpoint(parsed.Checkpoint.Entries())
	}
	in := make([]prune.Comment, len(comments))
	others := map[string]bool{}
	for i, c := range comments {
		in[i] = prune.Comment{ID: c.ID, Author: c.Author, Body: c.Body}
		if c.Author != trusted && strings.Contains(c.Body, prune.MarkerPrefix) {
			others[c.Author] = true
		}
	}
	var chain *prune.Chain
	var ledger *guard.Ledger
	ledgerProblem, bodyProblems := "", problems
	if !*noVerify {
		chain = &prune.Chain{Keys: rd.Keys.ArchiveVerifier(), Repo: iss.RepoID}
		ledger, ledgerProblem = guard.ReadLedger(s.Status, *issue, rd.Keys)
		if ledgerProblem != "" {
			problems = append(problems, ledgerProblem+": the end of the archive chain cannot be proven")
		}
		if ledger != nil {
			chain.Known, chain.Head, chain.Count = true, ledger.Archive, ledger.Archived
		}
	}
	rebuilt, rp := prune.Rebuild(in, trusted, *issue, tail, chain)
	if *verify {
		return printVerify(env, *format, verification{
			issue: *issue, snap: s, keys: rd.Keys, ledger: ledger, ledgerProblem: ledgerProblem,
			rebuilt: rebuilt, problems: rp, body: bodyProblems, others: others,
		})
	}
	var notes []string
	for _, p := range rp {
		if p.Note {
			notes = append(notes, p.String())
		} else {
			problems = append(problems, p.String())
		}
	}

	out := make([]historyEntry, len(rebuilt))
	for i, r := range rebuilt {
		out[i] = historyEntry{Seq: r.Seq, Agent: r.Agent, Action: r.Action, Invocation: r.Invocation, Timestamp: r.Timestamp, Source: "checkpoint"}
		if r.Comment != 0 {
			out[i].Source, out[i].Comment = "archive", r.Comment
		}
	}
	if *format == "json" {
		data, err := json.MarshalIndent(out, "", "  ")
		if err != nil {
			return cannotRun(err)
		}
		fmt.Fprintf(env.Stdout, "%s\n", data)
	} else {
		var buf bytes.Buffer
		enc := yaml.NewEncoder(&buf)
		enc.SetIndent(2)
		if err := errors.Join(enc.Encode(out), enc.Close()); err != nil {
			return cannotRun(err)
		}
		printUntrusted(env, buf.String())
	}
	if len(others) > 0 {
		logins := make([]string, 0, len(others))
		for l := range others {
			logins = append(logins, fmt.Sprintf("%q", l))
		}
		slices.Sort(logins)
		fmt.Fprintf(env.Stderr, "gns-guard: history: note: archive comments by %s were not trusted (only %q's are); pass --trust LOGIN to read them\n", strings.Join(logins, ", "), trusted)
	}
	for _, p := range notes {
		fmt.Fprintf(env.Stderr, "gns-guard: history: issue #%d: note: %s\n", *issue, p)
	}
	for _, p := range problems {
		fmt.Fprintf(env.Stderr, "gns-guard: history: issue #%d: %s\n", *issue, p)
	}
	if len(problems) > 0 {
		return errViolations
	}
	return nil
}
