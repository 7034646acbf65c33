package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/issues"
	ledgerpkg "github.com/gns-guard/gns-guard/internal/ledger"
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

// historyOptions are the parsed flags of `history`.
type historyOptions struct {
	issueFlags
	format     string
	trust      string
	noVerify   bool
	verify     bool
	publicKeys stringList
}

// historyFlags declares the flags of `history`.
func historyFlags(fs *flag.FlagSet) options {
	o := &historyOptions{}
	o.issueFlags.add(fs)
	fs.StringVar(&o.format, "format", "yaml", "output format: `yaml|json`")
	fs.StringVar(&o.trust, "trust", "", "the same as --guard-user: the `LOGIN` whose archive comments are trusted")
	fs.BoolVar(&o.noVerify, "no-verify", false, "read the archives without proving their chain (archives are checked by their hash only, ordered by comment id)")
	fs.BoolVar(&o.verify, "verify", false, "check every signature (the ledger record and every archive part) with the repository's published ledger-public-key, holding no secret, and print a one-line summary instead of the history")
	fs.Var(&o.publicKeys, "public-key", "a public `KEY` (ed25519:..., as gns-guard pubkey prints it) --verify checks with instead of ledger-public-key; repeat it for a key rotated out")
	return o
}

func (o *historyOptions) validate(_ *flag.FlagSet, pos []string, _ Env) error {
	if err := noPositional("history", pos); err != nil {
		return err
	}
	switch {
	case o.format != "yaml" && o.format != "json":
		return usageError("history: --format must be yaml or json, not %q", o.format)
	case o.noVerify && o.ledgerKeyEnv != "":
		return usageError("history: --no-verify and --ledger-key-env exclude each other")
	case o.verify && o.noVerify:
		return usageError("history: --verify and --no-verify exclude each other")
	case o.verify && o.ledgerKeyEnv != "":
		return usageError("history: --verify checks with the public key and needs no secret: drop --ledger-key-env (or drop --verify to check with the secret)")
	case len(o.publicKeys) > 0 && !o.verify:
		return usageError("history: --public-key is what --verify checks with: add --verify")
	case o.trust != "" && o.guardUser != "" && o.trust != o.guardUser:
		return usageError("history: --trust %s and --guard-user %s name different users", o.trust, o.guardUser)
	}
	o.guardUser = firstOf(o.guardUser, o.trust)
	return nil
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
func runHistory(ctx context.Context, o *historyOptions, env Env) error {
	reader, s, err := o.read(ctx, env)
	if err != nil {
		return err
	}
	number, trusted := o.issue, s.Guard
	done, cancel := deadline(ctx)
	defer cancel()
	tail, bodyProblems := historyTail(checkpoint.Parse(s.Issue.Body, checkpoint.Options{Issue: number, Done: done}))
	archives, others := archiveComments(s.Comments(), trusted)
	var end chainEnd
	if !o.noVerify {
		end = readChainEnd(s, number, reader.Keys)
	}
	rebuilt, rebuildProblems := prune.Rebuild(archives, trusted, number, tail, end.chain)
	if o.verify {
		return printVerify(env, o.format, verification{
			issue: number, snap: s, keys: reader.Keys, ledger: end.ledger, ledgerProblem: end.problem,
			rebuilt: rebuilt, problems: rebuildProblems, body: bodyProblems, others: others,
		})
	}
	problems := bodyProblems
	if end.problem != "" {
		problems = append(problems, end.problem+": the end of the archive chain cannot be proven")
	}
	notes, problems := splitNotes(rebuildProblems, problems)
	if err := printHistory(env, o.format, historyEntries(rebuilt)); err != nil {
		return err
	}
	return reportHistoryProblems(env, number, trusted, others, notes, problems)
}

// read connects and reads the whole issue; with --verify, the keys are
// the published public ones.
func (o *historyOptions) read(ctx context.Context, env Env) (*live.Reader, *live.Snapshot, error) {
	reader, _, err := o.open("history", env)
	if err != nil {
		return nil, nil, err
	}
	if o.verify {
		if reader.Keys, err = verifyKeys(ctx, &o.issueFlags, env, reader, o.publicKeys); err != nil {
			return nil, nil, err
		}
	}
	s, err := reader.Read(ctx, o.issue, live.ReadOptions{All: true})
	if err != nil {
		return nil, nil, err
	}
	return reader, s, nil
}

// historyTail is the end of the history the issue body's checkpoint
// holds, with what is wrong with it.
func historyTail(parsed checkpoint.Result) ([]prune.Entry, []string) {
	switch {
	case parsed.Checkpoint == nil && len(parsed.Blocks) == 0:
		return nil, []string{"the issue body has no checkpoint block: the history ends with the archives"}
	case parsed.Checkpoint == nil:
		return nil, []string{"the issue body's checkpoint cannot be read (run 'gns-guard check'): the history ends with the archives"}
	}
	var problems []string
	if !parsed.Valid() {
		problems = append(problems, "the issue body's checkpoint has errors (run 'gns-guard check'); its entries are included as read")
	}
	return prune.FromCheckpoint(parsed.Checkpoint.Entries()), problems
}

// archiveComments are the issue's comments as prune reads them, with the
// authors of archive comments that are not trusted.
func archiveComments(comments []issues.Comment, trusted string) ([]prune.Comment, map[string]bool) {
	in := make([]prune.Comment, len(comments))
	others := map[string]bool{}
	for i, c := range comments {
		in[i] = prune.Comment{ID: c.ID, Author: c.Author, Body: c.Body}
		if c.Author != trusted && strings.Contains(c.Body, prune.MarkerPrefix) {
			others[c.Author] = true
		}
	}
	return in, others
}

// chainEnd is where the archive chain must end: the part the guard's
// ledger records, or why that is not known.
type chainEnd struct {
	chain   *prune.Chain
	ledger  *ledgerpkg.Record
	problem string
}

// readChainEnd reads the guard's ledger for the end of the archive chain.
func readChainEnd(s *live.Snapshot, number int64, keys ledgerpkg.Keys) chainEnd {
	end := chainEnd{chain: &prune.Chain{Keys: keys.ArchiveVerifier(), Repo: s.Issue.RepoID}}
	end.ledger, end.problem = ledgerpkg.Read(s.Status, number, keys)
	if l := end.ledger; l != nil {
		end.chain.Known, end.chain.Head, end.chain.Count = true, l.Archive, l.Archived
	}
	return end
}

// splitNotes sorts the rebuild's problems into notes and problems, the
// latter after the ones known before.
func splitNotes(found []prune.Problem, problems []string) ([]string, []string) {
	var notes []string
	for _, p := range found {
		if p.Note {
			notes = append(notes, p.String())
		} else {
			problems = append(problems, p.String())
		}
	}
	return notes, problems
}

// historyEntries are the rebuilt entries as `history` prints them.
func historyEntries(rebuilt []prune.Rebuilt) []historyEntry {
	out := make([]historyEntry, len(rebuilt))
	for i, r := range rebuilt {
		out[i] = historyEntry{Seq: r.Seq, Agent: r.Agent, Action: r.Action, Invocation: r.Invocation, Timestamp: r.Timestamp, Source: "checkpoint"}
		if r.Comment != 0 {
			out[i].Source, out[i].Comment = "archive", r.Comment
		}
	}
	return out
}

// printHistory prints the entries as JSON, or as YAML (which holds
// agents' text, so it is printed as untrusted).
func printHistory(env Env, format string, entries []historyEntry) error {
	if format == "json" {
		return printIndented(env, entries)
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := errors.Join(enc.Encode(entries), enc.Close()); err != nil {
		return cannotRun(err)
	}
	printUntrusted(env, buf.String())
	return nil
}

// reportHistoryProblems prints on standard error the authors not trusted,
// the notes and the problems. Any problem exits 1.
func reportHistoryProblems(env Env, number int64, trusted string, others map[string]bool, notes, problems []string) error {
	if len(others) > 0 {
		fmt.Fprintf(env.Stderr, "gns-guard: history: note: archive comments by %s were not trusted (only %q's are); pass --trust LOGIN to read them\n", quotedLogins(others), trusted)
	}
	for _, p := range notes {
		fmt.Fprintf(env.Stderr, "gns-guard: history: issue #%d: note: %s\n", number, p)
	}
	for _, p := range problems {
		fmt.Fprintf(env.Stderr, "gns-guard: history: issue #%d: %s\n", number, p)
	}
	if len(problems) > 0 {
		return errViolations
	}
	return nil
}

// quotedLogins lists logins quoted, sorted and comma-separated.
func quotedLogins(logins map[string]bool) string {
	quoted := make([]string, 0, len(logins))
	for l := range logins {
		quoted = append(quoted, fmt.Sprintf("%q", l))
	}
	slices.Sort(quoted)
	return strings.Join(quoted, ", ")
}
