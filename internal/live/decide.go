package live

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gns-guard/gns-guard/internal/access"
	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

// Input has no parse deadline yet (see Deadline); repo is OWNER/NAME.
func (s *Snapshot) Input(cfg config.Config, ev issues.Event, repo string, now time.Time, counter *tokens.Counter) guard.Input {
	return guard.Input{
		Config:      cfg,
		Issue:       s.Issue,
		Event:       ev,
		Recent:      s.Recent.Comments,
		Self:        s.Guard,
		Repo:        repo,
		PullFiles:   s.Files,
		Now:         now.UTC(),
		Counter:     counter,
		Status:      s.Status,
		Older:       s.Older,
		LabelEvents: s.Labels,
		Unreached:   s.Unreached,
		Anchor:      s.Anchor,
		Hint:        s.Hint(cfg.RecentWindow()),
		Record:      s.Verified(ledger.ConfigKeys(cfg)),
	}
}

// Deadline bounds one decision's YAML parses; cancel releases it.
func Deadline(in guard.Input) (guard.Input, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(context.Background(), checkpoint.ParseTimeout)
	in.Done = ctx.Done()
	return in, cancel
}

// maxAdminQuestions bounds the permission look-ups of one decision.
const maxAdminQuestions = 3

// Decide runs the guard's decision on in, answering the questions it asks
// of the server and deciding again; answers are kept for the reader's
// later decisions. notes are facts for the status comment (a question the
// token may not ask). It is the one loop around guard.Decide that reads:
//
//	read (Reader.Read: the issue, the ledger record verified once)
//	  │
//	  ▼
//	guard.Decide ◄──────────────┐ (pure: state in, plan out)
//	  │ the plan asks:          │
//	  ├─ AskTask     → who changed the task (edit history, title changes)
//	  ├─ AskComments → accepted results by id
//	  ├─ AskWriters  → who can write the issue
//	  └─ AskAdmin    → a user's permission (at most maxAdminQuestions)
//	  │ each answer goes into in ┘
//	  ▼
//	plan ──► the action's regrant: the grant list read anew; changed, Decide again
//	  │
//	  ▼
//	apply ──► status.Stable decides on the issue as the run leaves it,
//	          until the status comment says the same twice (at most 3)
//
// Every round decides on the same verified record (guard.Input.Record).
func (r *Reader) Decide(ctx context.Context, in guard.Input) (plan *guard.Plan, notes []string, err error) {
	if r.admins == nil {
		r.admins = map[string]bool{}
	}
	for asked := 0; ; asked++ {
		in.Admins = r.admins
		d, cancel := Deadline(in)
		plan = guard.Decide(d)
		cancel()
		if plan.AskTask != nil && in.TaskEdits == nil {
			if in.TaskEdits, err = r.taskEdits(ctx, in.Issue.Number, *plan.AskTask); err != nil {
				return nil, notes, err
			}
			continue
		}
		if len(plan.AskComments) > 0 && in.Fetched == nil {
			if in.Fetched, err = r.fetchComments(ctx, in.Issue.Number, plan.AskComments); err != nil {
				return nil, notes, err
			}
			continue
		}
		if plan.AskWriters && in.Writers == nil {
			if in.Writers, err = r.writerList(ctx); err != nil {
				return nil, notes, err
			}
			if in.Writers.Problem != "" && r.Forge != nil {
				notes = append(notes, in.Writers.Problem)
			}
			continue
		}
		user := plan.AskAdmin
		if user == "" || asked == maxAdminQuestions {
			return plan, notes, nil
		}
		admin, note, err := r.isAdmin(ctx, user)
		if err != nil {
			return nil, notes, err
		}
		if note != "" {
			notes = append(notes, note)
		}
		r.admins[user] = admin
	}
}

// isAdmin: only an admin reads permissions, so without one it answers no,
// noting why.
func (r *Reader) isAdmin(ctx context.Context, user string) (bool, string, error) {
	if r.Admin == nil {
		return false, "", nil
	}
	admin, err := r.Admin.IsRepoAdmin(ctx, user)
	switch {
	case errors.Is(err, issues.ErrForbidden) || errors.Is(err, issues.ErrNotFound):
		return false, fmt.Sprintf("Whether %s is a repository admin could not be checked (the token may not read permissions): set "+
			"budget-admins, or admin-token, so approvals can be recognized.", strconv.Quote(user)), nil
	case err != nil:
		return false, "", r.Where.Error("check the permission of "+user, err)
	}
	return admin, "", nil
}

// taskEdits reads who changed the task of issue n: the body's edit
// history and the title's changes, as a asks. A read the server refuses
// (a private repository keeps its history from anyone not signed in) is
// an answer that says so.
func (r *Reader) taskEdits(ctx context.Context, n int64, a guard.TaskAsk) (*guard.TaskEdits, error) {
	te := &guard.TaskEdits{}
	if r.Forge == nil {
		te.BodyProblem, te.TitleProblem = "the issue was not read from a server", "the issue was not read from a server"
		return te, nil
	}
	refused := func(err error) bool {
		return errors.Is(err, issues.ErrNotFound) || errors.Is(err, issues.ErrForbidden) || errors.Is(err, issues.ErrTooLarge)
	}
	var err error
	if a.Body {
		te.Revisions, err = r.Forge.BodyHistory(ctx, n)
		switch {
		case refused(err):
			te.BodyProblem = err.Error()
		case err != nil:
			return nil, r.Where.Error(fmt.Sprintf("read the edit history of issue #%d", n), err)
		}
	}
	if a.Title {
		te.Titles, err = r.Forge.TitleChanges(ctx, n, a.Since)
		switch {
		case refused(err):
			te.TitleProblem = err.Error()
		case err != nil:
			return nil, r.Where.Error(fmt.Sprintf("read the title changes of issue #%d", n), err)
		}
	}
	return te, nil
}

// fetchComments reads results by id, a request each; nil: gone.
func (r *Reader) fetchComments(ctx context.Context, n int64, ids []int64) (map[int64]*issues.Comment, error) {
	out := map[int64]*issues.Comment{}
	for _, id := range ids {
		c, err := r.Forge.Comment(ctx, n, id)
		switch {
		case errors.Is(err, issues.ErrNotFound):
			out[id] = nil
		case err != nil:
			return nil, r.Where.Error(fmt.Sprintf("read comment %d of issue #%d", id, n), err)
		default:
			out[id] = &c
		}
	}
	return out, nil
}

// writerList reads who can write the issue (one request), once per
// reader: the repository's writers as package access has them, the meter's
// rule. A refusal is an answer: every author then counts as a writer, and
// its Problem says so.
func (r *Reader) writerList(ctx context.Context) (*guard.WriterList, error) {
	switch {
	case r.writers != nil:
		return r.writers, nil
	case r.Forge == nil:
		// Read from files: who can write is unknown.
		return &guard.WriterList{Problem: "the issue was not read from a server"}, nil
	}
	logins, err := r.Forge.Writers(ctx)
	switch {
	case errors.Is(err, issues.ErrForbidden) || errors.Is(err, issues.ErrNotFound) || errors.Is(err, issues.ErrUnauthorized):
		r.writers = &guard.WriterList{Problem: "Who can write the issue could not be read (" + err.Error() + "): every comment's author " +
			"counts as a writer, and outsiders are not told apart."}
	case err != nil:
		return nil, r.Where.Error("list who can write the issues", err)
	default:
		owner, _, _ := strings.Cut(r.Where.Repo, "/")
		r.writers = &guard.WriterList{Logins: access.Writers{Owner: owner, Listed: logins}.Logins(), Read: r.serverNow(time.Now())}
	}
	return r.writers, nil
}

// Unjudged says the guard has not judged the issue for longer than
// cfg.UnjudgedGrace: no trusted record, or a body ahead of the ledger since
// its first edit after it (one request, only when the ledger is older than
// the grace). Comments, labels and pending approvals change nothing. now is
// the server's clock as last answered.
func (r *Reader) Unjudged(ctx context.Context, s *Snapshot, cfg config.Config, now time.Time) *ledger.Unjudged {
	if s == nil || !s.Governed || s.Issue.IsPull {
		return nil
	}
	n := s.Issue.Number
	l, problem := s.RecordOf(s.Status, r.Keys)
	switch {
	case l == nil && s.Issue.CreatedAt.IsZero():
		return nil // the server did not say when the issue was opened
	case s.Status == nil:
		return ledger.Unrecorded(s.Issue, "the guard's status comment, which holds its ledger, is not on the issue", r.serverNow(now), cfg.UnjudgedGrace)
	case l == nil:
		return ledger.Unrecorded(s.Issue, problem, r.serverNow(now), cfg.UnjudgedGrace)
	case s.Issue.NoCAS || s.Issue.ContentVersion <= l.ContentVersion:
		return nil // judged: no clock needed
	}
	now = r.serverNow(now)
	since := time.Unix(l.Written, 0)
	if now.Sub(since) > cfg.UnjudgedGrace {
		if at, ok := r.Forge.FirstEditAfter(ctx, n, since); ok {
			since = at
		}
	}
	return ledger.BehindSince(l, s.Issue, since, now, cfg.UnjudgedGrace)
}

// serverNow is the server's last clock, else now.
func (r *Reader) serverNow(now time.Time) time.Time {
	if r.Forge != nil {
		if t := r.Forge.ServerTime(); !t.IsZero() {
			return t
		}
	}
	return now
}
