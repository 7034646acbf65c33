package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/forge"
	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/prune"
)

// historyForge builds the client `history` reads through; tests replace it.
var historyForge = func(server, token, owner, repo string) (guard.Forge, error) {
	return forge.New(server, token, owner, repo)
}

// maxHistoryPages bounds the timeline pages `history` reads (50 entries
// each): far more than any real issue has.
const maxHistoryPages = 10000

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
// proven) go to standard error, naming the comment, and exit 1.
func runHistory(ctx context.Context, args []string, env Env) error {
	fs := newFlags("history", env, "history --repo OWNER/NAME --issue N [flags]")
	repo := fs.String("repo", "", "the repository, OWNER/NAME")
	issue := fs.Int64("issue", 0, "the issue's number")
	server := fs.String("server", "", "the Gitea server's URL (default: $GITHUB_SERVER_URL)")
	token := fs.String("token", "", "an access token (default: $GITEA_TOKEN, then $GITHUB_TOKEN)")
	format := fs.String("format", "yaml", "output format: yaml or json")
	trust := fs.String("trust", "", "the login whose archive comments are trusted (default: the token's own user), e.g. gitea-actions")
	keyEnv := fs.String("ledger-key-env", "", "the environment variable holding the ledger-key secret: every archive part's signature and the ledger record must verify under it")
	noVerify := fs.Bool("no-verify", false, "read the archives without proving their chain (archives are checked by their hash only, ordered by comment id)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usageError("history takes no positional arguments, got: %s", strings.Join(pos, " "))
	}
	owner, name, ok := strings.Cut(*repo, "/")
	switch {
	case *repo == "":
		return usageError("history: --repo OWNER/NAME is required")
	case !ok || owner == "" || name == "" || strings.Contains(name, "/"):
		return usageError("history: --repo must be OWNER/NAME, not %q", *repo)
	case *issue < 1:
		return usageError("history: --issue N (a positive issue number) is required")
	case *format != "yaml" && *format != "json":
		return usageError("history: --format must be yaml or json, not %q", *format)
	case *noVerify && *keyEnv != "":
		return usageError("history: --no-verify and --ledger-key-env exclude each other")
	}
	var key []byte
	if *keyEnv != "" {
		if key = []byte(env.Getenv(*keyEnv)); len(key) == 0 {
			return usageError("history: --ledger-key-env %s: the variable is not set or empty", *keyEnv)
		}
	}
	url := firstOf(*server, env.Getenv("GITHUB_SERVER_URL"))
	if url == "" {
		return usageError("history: no server: pass --server URL or set GITHUB_SERVER_URL")
	}
	tok := firstOf(*token, env.Getenv("GITEA_TOKEN"), env.Getenv("GITHUB_TOKEN"))
	if tok == "" && *trust == "" {
		return usageError("history: without a token (--token, GITEA_TOKEN or GITHUB_TOKEN) say whose archive comments to trust with --trust LOGIN")
	}
	f, err := historyForge(url, tok, owner, name)
	if err != nil {
		return usageError("history: %v", err)
	}
	trusted := *trust
	if trusted == "" {
		if trusted, err = f.Self(ctx); err != nil {
			return historyError(url, "look up the token's own user", err)
		}
	}
	iss, err := f.Issue(ctx, *issue)
	if err != nil {
		return historyError(url, fmt.Sprintf("read issue #%d of %s", *issue, *repo), err)
	}
	comments, err := allComments(ctx, f, iss)
	if err != nil {
		return historyError(url, fmt.Sprintf("read the comments of issue #%d", *issue), err)
	}

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
	if !*noVerify {
		chain = &prune.Chain{Key: key}
		ledger, problem := readLedger(comments, trusted, *issue, key)
		if problem != "" {
			problems = append(problems, problem)
		}
		if ledger != nil {
			chain.Known, chain.Head, chain.Count = true, ledger.Archive, ledger.Archived
		}
	}
	rebuilt, rp := prune.Rebuild(in, trusted, *issue, tail, chain)
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

// readLedger finds the guard's status comment among comments (trusted's,
// with the status marker and no archive marker; the newest whose record
// verifies, else the newest) and reads its ledger record, which says where
// the archive chain ends. It returns a problem when the record cannot be
// trusted; neither when there is no status comment (the chain then says
// its end cannot be proven).
func readLedger(comments []guard.Comment, trusted string, issue int64, key []byte) (*guard.Ledger, string) {
	var newest *guard.Comment
	for i := len(comments) - 1; i >= 0; i-- {
		c := &comments[i]
		if c.Author != trusted || !strings.Contains(c.Body, guard.StatusMarker(issue)) || strings.Contains(c.Body, prune.MarkerPrefix) {
			continue
		}
		if newest == nil {
			newest = c
		}
		if l, _ := guard.ReadLedger(c, issue, key); l != nil {
			return l, ""
		}
	}
	if newest == nil {
		return nil, ""
	}
	_, problem := guard.ReadLedger(newest, issue, key)
	return nil, problem + ": the end of the archive chain cannot be proven"
}

// allComments reads every comment of the issue, oldest first: the last
// page of the timeline, then page after page backwards to its start.
func allComments(ctx context.Context, f guard.Forge, iss guard.Issue) ([]guard.Comment, error) {
	page, err := f.RecentComments(ctx, iss, forge.PageSize)
	if err != nil {
		return nil, err
	}
	seen := map[int64]bool{}
	var chunks [][]guard.Comment
	keep := func(cs []guard.Comment) {
		var fresh []guard.Comment
		for _, c := range cs {
			if !seen[c.ID] {
				seen[c.ID] = true
				fresh = append(fresh, c)
			}
		}
		chunks = append(chunks, fresh)
	}
	keep(page.Comments)
	for start, pages := page.Start, 0; start > 0; pages++ {
		if pages >= maxHistoryPages {
			return nil, fmt.Errorf("the timeline has more than %d pages", maxHistoryPages)
		}
		before, err := f.CommentsBefore(ctx, iss.Number, start)
		if err != nil {
			return nil, err
		}
		if before.Start >= start {
			return nil, fmt.Errorf("the timeline did not move back from offset %d", start)
		}
		keep(before.Comments)
		start = before.Start
	}
	var all []guard.Comment
	for i := len(chunks) - 1; i >= 0; i-- {
		all = append(all, chunks[i]...)
	}
	return all, nil
}

// historyError says why `history` could not read the server: exit 3.
func historyError(server, what string, err error) error {
	var he *forge.HTTPError
	switch {
	case forge.IsUnreachable(err):
		return cannotRun(fmt.Errorf("history: could not reach the server %s to %s: %w", server, what, err))
	case errors.As(err, &he) && he.Status == http.StatusUnauthorized:
		return cannotRun(fmt.Errorf("history: the server %s rejected the token (HTTP 401) when trying to %s; check --token, GITEA_TOKEN or GITHUB_TOKEN", server, what))
	case errors.Is(err, guard.ErrForbidden):
		return cannotRun(fmt.Errorf("history: the token may not %s (HTTP 403): %w", what, err))
	case errors.Is(err, guard.ErrNotFound):
		return cannotRun(fmt.Errorf("history: could not %s: not found, or the token cannot see it (HTTP 404)", what))
	}
	return cannotRun(fmt.Errorf("history: could not %s: %w", what, err))
}

func firstOf(values ...string) string {
	for _, v := range values {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}
