package agentwrite

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/finding"
	"github.com/gns-guard/gns-guard/internal/handoff"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/issuetx"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/live"
	"github.com/gns-guard/gns-guard/internal/prune"
)

// RecoverResult is what Recover found and did.
type RecoverResult struct {
	Issue    int64             `json:"issue"`
	Problem  string            `json:"problem"`
	Findings []finding.Finding `json:"findings"`
	Baseline handoff.Baseline  `json:"baseline"`
	Proposal *handoff.Proposal `json:"proposal"`
	// Body holds the proposed block in place.
	Body           string `json:"body"`
	Applied        bool   `json:"applied"`
	ContentVersion int    `json:"content_version,omitempty"`
	// base is the content version the proposal was built on.
	base int
}

// Recover proposes, and with apply writes, a checkpoint rebuilt from the
// last state the guard trusted and the agents' footers since. The result
// is nil when the checkpoint is valid: there is nothing to recover.
func Recover(ctx context.Context, c Conn, n int64, apply bool) (*RecoverResult, error) {
	var res *RecoverResult
	err := issuetx.Run(ctx, func(ctx context.Context, _ issuetx.Attempt) error {
		s, err := c.Reader.Read(ctx, n, live.ReadOptions{All: true})
		if err != nil {
			return err
		}
		ev := issues.Event{Name: "issues", Action: "edited", Number: n}
		plan, _, err := c.Reader.Decide(ctx, s.Input(c.Config, ev, c.Reader.Where.Repo, c.Now(), nil))
		if err != nil {
			return err
		}
		if res, err = proposeRecovery(ctx, s, c.Config, plan.Authors, c.Now()); err != nil || res == nil || !apply {
			return err
		}
		cv, err := c.Client.EditBody(ctx, n, res.Body, res.base)
		if err != nil {
			return c.Reader.Where.Error("write the proposed checkpoint (compare-and-swap)", err) // a lost race is made again
		}
		res.Applied, res.ContentVersion = true, cv
		return nil
	}, nil)
	if err != nil {
		return nil, err
	}
	return res, nil
}

// MayRecover says whether self may apply a recovery: a budget admin, or,
// with none named, a repository admin. Otherwise a usage error (exit 2)
// says why.
func MayRecover(ctx context.Context, rd *live.Reader, self string, admins []string) error {
	if len(admins) > 0 {
		if slices.Contains(admins, self) {
			return nil
		}
		return usageError("recover: --apply: %q is not in --budget-admins (%s): only a budget admin writes a recovered checkpoint; "+
			"run without --apply and hand the proposal to one", self, strings.Join(admins, ", "))
	}
	ok, err := rd.Admin.IsRepoAdmin(ctx, self)
	if err != nil && !errors.Is(err, issues.ErrForbidden) && !errors.Is(err, issues.ErrNotFound) {
		return rd.Where.Error(fmt.Sprintf("check whether %q is a repository admin", self), err)
	}
	if !ok {
		return usageError("recover: --apply: %q is not a repository admin and --budget-admins is empty: "+
			"only an approver writes a recovered checkpoint; run without --apply and hand the proposal to one", self)
	}
	return nil
}

// proposeRecovery rebuilds the checkpoint of an issue read whole; nil
// when the checkpoint is valid. A footer counts only when its author may
// speak as its agent (authors, as the guard judges the issue).
func proposeRecovery(ctx context.Context, s *live.Snapshot, cfg config.Config, authors issues.Authors, now time.Time) (*RecoverResult, error) {
	n, iss := s.Issue.Number, s.Issue
	if iss.BodyTooLarge {
		return nil, &exitcode.ViolationError{Err: fmt.Errorf("recover: issue #%d: the body is at least %d bytes, more than the guard reads (%d): "+
			"a person shortens it first; recovering would replace what could not be read", n, iss.BodyBytes, issues.MaxBodyBytes)}
	}
	done, cancel := deadline(ctx)
	defer cancel()
	parsed := checkpoint.Parse(iss.Body, checkpoint.Options{Issue: n, MaxBytes: cfg.MaxCheckpointBytes, TailLimit: cfg.HistoryTail, Done: done})
	if parsed.Valid() {
		return restoreAccepted(s, parsed, cfg)
	}
	if err := live.AwaitGuard("recover", s, parsed); err != nil {
		return nil, err
	}
	comments := s.Comments()
	res := &RecoverResult{base: iss.ContentVersion}
	res.Issue = n
	res.Findings = []finding.Finding{}
	for _, fd := range parsed.Findings {
		if fd.IsError() {
			res.Findings = append(res.Findings, fd)
		}
	}
	switch {
	case len(parsed.Blocks) == 0:
		res.Problem = "missing"
	case len(parsed.Blocks) > 1:
		res.Problem = "ambiguous"
	default:
		res.Problem = "invalid"
	}
	base, created, err := baseline(comments, s.Status, n, cfg, s.Guard, now)
	if err != nil {
		return nil, &exitcode.ViolationError{Err: fmt.Errorf("recover: issue #%d: %w; "+
			"rebuild the checkpoint by hand from 'gns-guard history' and the agents' comments", n, err)}
	}
	res.Baseline = base
	var events []handoff.Event
	archives := make([]prune.Comment, 0, len(comments))
	for _, c := range comments {
		archives = append(archives, prune.Comment{ID: c.ID, Author: c.Author, Body: c.Body})
		if c.Author == s.Guard {
			continue
		}
		if ft, ok := handoff.ParseFooter(c.Body); ok && authors.Speaks(c, ft.Agent) {
			events = append(events, handoff.Event{CommentID: c.ID, Author: c.Author, Created: c.CreatedAt, Footer: ft})
		}
	}
	archived, _ := prune.Rebuild(archives, s.Guard, n, nil, nil)
	var broken *checkpoint.Checkpoint
	if len(parsed.Blocks) == 1 {
		broken = parsed.Checkpoint
	}
	prop, err := handoff.Reconstruct(handoff.RecoverInput{
		Issue: n, Baseline: base, Events: events, Broken: broken, Labels: iss.LabelNames(),
		TailLimit: cfg.HistoryTail, Created: created, Archived: prune.Entries(archived),
	})
	if err != nil {
		return nil, cannotRun(fmt.Errorf("recover: issue #%d: %w", n, err))
	}
	res.Proposal = prop
	res.Body = checkpoint.RewriteHint(iss.Body, placeBlock(iss.Body, parsed.Blocks, prop.YAML), s.Hint(cfg.RecentWindow()).At, cfg.MaxCheckpointBytes)
	return res, nil
}

// restoreAccepted proposes, for a valid checkpoint changed against the
// state the guard's ledger accepted (what the guard fails as tampering),
// that state back, field by field; nil when the ledger holds none or the
// checkpoint keeps to it.
func restoreAccepted(s *live.Snapshot, parsed checkpoint.Result, cfg config.Config) (*RecoverResult, error) {
	n := s.Issue.Number
	base, why := ledgerBaseline(s.Status, n, cfg)
	if why != "" {
		return nil, nil
	}
	prop, err := handoff.Restore(parsed.Checkpoint, base)
	if err != nil {
		return nil, cannotRun(fmt.Errorf("recover: issue #%d: %w", n, err))
	}
	if prop == nil {
		return nil, nil
	}
	res := &RecoverResult{base: s.Issue.ContentVersion}
	res.Issue, res.Problem, res.Findings = n, "tampered", []finding.Finding{}
	res.Baseline, res.Proposal = base, prop
	res.Body = checkpoint.RewriteHint(s.Issue.Body, parsed.Block().Replace(prop.YAML), s.Hint(cfg.RecentWindow()).At, cfg.MaxCheckpointBytes)
	return res, nil
}

// baseline finds the last state the guard trusted: its ledger (verified),
// else its newest archive that verifies. created is the time of the
// guard's first record, for created_at when nothing better is known.
func baseline(comments []issues.Comment, status *issues.Comment, n int64, cfg config.Config, guardUser string,
	now time.Time) (handoff.Baseline, time.Time, error) {
	created := firstGuardRecord(comments, guardUser, now)
	base, why := ledgerBaseline(status, n, cfg)
	if why == "" {
		return base, created, nil
	}
	if base, ok := archiveBaseline(comments, n, guardUser, why); ok {
		return base, created, nil
	}
	return handoff.Baseline{}, created, fmt.Errorf("%w (%s)", handoff.ErrNoBaseline, why)
}

// firstGuardRecord is the guard's first comment time, else now.
func firstGuardRecord(comments []issues.Comment, guardUser string, now time.Time) time.Time {
	for _, c := range comments {
		if c.Author == guardUser && strings.Contains(c.Body, "<!-- gns-guard:") {
			return c.CreatedAt
		}
	}
	return now
}

// ledgerBaseline is the last accepted state, or why there is none.
func ledgerBaseline(status *issues.Comment, n int64, cfg config.Config) (handoff.Baseline, string) {
	l, problem := ledger.Read(status, n, ledger.ConfigKeys(cfg))
	switch {
	case l != nil && l.Baseline:
		how := "unsigned: trusted by its author and marker"
		if ledger.ConfigKeys(cfg).Any() {
			how = "its signature verified with the ledger key"
		}
		return handoff.Baseline{
			Source:  fmt.Sprintf("the guard's ledger in its status comment %d (%s)", status.ID, how),
			Version: l.Version, Issue: l.CheckpointIssue, Phase: l.Phase,
			Total: l.Total, Consumed: l.Consumed, Remaining: l.Remaining,
			Written: time.Unix(l.Written, 0),
		}, ""
	case problem != "":
		return handoff.Baseline{}, problem
	case status == nil:
		return handoff.Baseline{}, "the guard's status comment was not found"
	}
	return handoff.Baseline{}, "the guard's ledger holds no accepted state yet"
}

// archiveBaseline is the newest verified archive's budget; why: no ledger.
func archiveBaseline(comments []issues.Comment, n int64, guardUser, why string) (handoff.Baseline, bool) {
	groups := guardArchives(comments, n, guardUser)
	for i := len(groups) - 1; i >= 0; i-- {
		g := groups[i]
		if prune.Verify(g.parts) != nil {
			continue
		}
		a, c := g.parts[0], g.last
		b := a.Budget.Budget
		src := fmt.Sprintf("the guard's archive comment %d (the budget it recorded at archive time)", c.ID)
		if np := a.Budget.NewPhase; np != nil {
			b = *np
			src = fmt.Sprintf("the guard's archive comment %d (the new phase budget it recorded)", c.ID)
		}
		return handoff.Baseline{
			Source: src + "; " + why, Version: 2, Issue: n, Phase: a.Phase,
			Total: b.Total, Consumed: b.Consumed, Remaining: b.Remaining, Written: c.CreatedAt,
		}, true
	}
	return handoff.Baseline{}, false
}

// archiveGroup is one archive's parts and its last part's comment.
type archiveGroup struct {
	parts []*prune.Archive
	last  issues.Comment
}

// guardArchives groups by archived body, oldest first.
func guardArchives(comments []issues.Comment, n int64, guardUser string) []*archiveGroup {
	bySHA := map[string]*archiveGroup{}
	var groups []*archiveGroup
	for _, c := range comments {
		if c.Author != guardUser || !strings.Contains(c.Body, prune.MarkerPrefix) {
			continue
		}
		a, err := prune.ParseArchive(c.Body)
		if err != nil || a.Issue != n {
			continue
		}
		g, ok := bySHA[a.SHA256]
		if !ok {
			g = &archiveGroup{}
			bySHA[a.SHA256] = g
			groups = append(groups, g)
		}
		g.parts = append(g.parts, a)
		g.last = c
	}
	return groups
}

// placeBlock puts the block content into the body: in place of the one
// block (every other byte kept), after the body when there is none, and in
// place of the first of several, the others removed.
func placeBlock(body string, blocks []checkpoint.Block, yaml string) string {
	if len(blocks) == 0 {
		sep := "\n\n"
		switch {
		case body == "":
			sep = ""
		case strings.HasSuffix(body, "\n\n"):
			sep = ""
		case strings.HasSuffix(body, "\n"):
			sep = "\n"
		}
		return body + sep + "```yaml\n" + strings.TrimRight(yaml, "\n") + "\n```\n"
	}
	out := blocks[0].Replace(yaml)
	delta := len(out) - len(body)
	for i := len(blocks) - 1; i >= 1; i-- {
		b := blocks[i]
		out = out[:b.Start+delta] + out[b.End+delta:]
	}
	return out
}

// usageError is exit 2.
func usageError(format string, args ...any) error {
	return &exitcode.UsageError{Err: fmt.Errorf(format, args...)}
}

// cannotRun is exit 3.
func cannotRun(err error) error { return &exitcode.CannotRunError{Err: err} }

// deadline bounds a YAML parse; cancelling ctx ends it too.
func deadline(ctx context.Context) (<-chan struct{}, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(ctx, checkpoint.ParseTimeout)
	return ctx.Done(), cancel
}
