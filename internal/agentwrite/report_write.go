package agentwrite

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/handoff"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/live"
	"github.com/gns-guard/gns-guard/internal/meterclient"
)

// write posts (or updates) the result comment, patches the checkpoint
// compare-and-swap, and makes the label and assignee changes. A conflict
// is returned as is: the transaction reads again.
func (w *reporter) write(ctx context.Context, s *live.Snapshot, step *reportStep) error {
	if err := w.writeComment(ctx, s.Issue.Number, step); err != nil {
		return err
	}
	cv, err := w.Client.EditBody(ctx, s.Issue.Number, step.out.Body, s.Issue.ContentVersion)
	if errors.Is(err, issues.ErrConflict) {
		return err
	}
	if err != nil {
		return w.Reader.Where.Error("patch the checkpoint (compare-and-swap)", err)
	}
	w.res.Patched, w.res.ContentVersion, w.res.Outcome = true, cv, "written"
	if err := w.applyLabels(ctx, s.Issue, step.out); err != nil {
		return w.Reader.Where.Error("update the labels", err)
	}
	return nil
}

// writeComment posts, or updates an earlier run's comment whose figures
// moved.
func (w *reporter) writeComment(ctx context.Context, n int64, step *reportStep) error {
	res := w.res
	switch {
	case step.own == nil:
		c, err := w.Client.CreateComment(ctx, n, step.comment)
		if err != nil {
			return w.Reader.Where.Error("post the result comment", err)
		}
		res.CommentID, res.CommentURL, res.CommentPosted = c.ID, c.HTMLURL, true
	case strings.TrimSpace(step.own.Body) != strings.TrimSpace(step.comment):
		// The budget moved: state the body's new figures.
		if _, err := w.Client.EditComment(ctx, step.own.ID, step.comment); err != nil {
			return w.Reader.Where.Error("update the result comment", err)
		}
		res.Notes = append(res.Notes, fmt.Sprintf("comment %d was posted by an earlier run of this invocation; its figures were updated", step.own.ID))
	default:
		res.Notes = append(res.Notes, fmt.Sprintf("comment %d was posted by an earlier run of this invocation; the checkpoint is patched now", step.own.ID))
	}
	return nil
}

// applyLabels makes the label and assignee changes the issue still needs.
// A refused assignee is a note, not a failure: state.assignee holds it.
func (w *reporter) applyLabels(ctx context.Context, iss issues.Issue, out *handoff.Outcome) error {
	if len(out.Add) > 0 {
		if err := w.Client.AddLabels(ctx, iss.Number, out.Add, nil); err != nil {
			return err
		}
	}
	for _, name := range out.Remove {
		for _, l := range iss.Labels {
			if l.Name == name {
				if err := w.Client.RemoveLabel(ctx, iss.Number, l); err != nil && !errors.Is(err, issues.ErrNotFound) {
					return err
				}
			}
		}
	}
	res, rep := w.res, w.req.Report
	res.LabelsAdded, res.LabelsRemoved = nonNilList(out.Add), nonNilList(out.Remove)
	if rep.Assignee != nil {
		var logins []string
		if *rep.Assignee != "" {
			logins = []string{*rep.Assignee}
		}
		if err := w.Client.SetAssignees(ctx, iss.Number, logins); err != nil {
			res.Notes = append(res.Notes, fmt.Sprintf("the issue's assignee could not be set to %q (%v); state.assignee holds it", *rep.Assignee, err))
		}
	}
	return nil
}

// openInvocation takes, when the report names no invocation, the one the
// meter opened for the token's calls that named none
// (docs/meter.md#one-configuration-kilo-or-any-openai-sdk). Without a
// meter, or when it opened none, the invocation is required: it makes a
// re-run safe.
func (w *reporter) openInvocation(ctx context.Context) error {
	if strings.TrimSpace(w.req.Report.Invocation) != "" {
		return nil
	}
	m := w.meter()
	if m == nil {
		return &exitcode.UsageError{Err: errors.New("report: --invocation ID is required: it makes a re-run safe " +
			"(with meter-url set, the meter names the invocation its calls opened)")}
	}
	owner, name, _ := strings.Cut(w.Reader.Where.Repo, "/")
	cur, err := m.Current(ctx, owner, name, w.req.Issue)
	if err != nil {
		return &exitcode.UsageError{Err: fmt.Errorf("report: no --invocation, and the meter at %s names none: %v; pass --invocation ID", m.Base, err)}
	}
	w.req.Report.Invocation = cur.Invocation
	w.res.Notes = append(w.res.Notes, fmt.Sprintf("invocation %s: the one the meter opened for this token's calls on the issue", cur.Invocation))
	return nil
}

// fetchReceipt asks the meter for the invocation's signed receipt, with
// the agent's own token (docs/meter.md#receipts). Without one, a report
// under metering: required cannot run (exit 3); otherwise it goes on, and
// a note says why there is none.
func (w *reporter) fetchReceipt(ctx context.Context) error {
	m := w.meter()
	if m == nil || w.req.Report.Receipt != nil {
		return nil // none, or the gate signed it
	}
	rep := &w.req.Report
	owner, name, _ := strings.Cut(w.Reader.Where.Repo, "/")
	rc, err := m.Receipt(ctx, owner, name, w.req.Issue, rep.Invocation)
	if err == nil {
		rep.Receipt = rc
		w.res.Notes = append(w.res.Notes, fmt.Sprintf("the meter counted %d tokens in %d calls for invocation %s; its signed receipt is in the footer",
			rc.Tokens, rc.Calls, rep.Invocation))
		if rep.Consumed < rc.Tokens {
			w.res.Notes = append(w.res.Notes, fmt.Sprintf("--consumed %d is below the %d tokens metered: the guard fails consumption-under-reported",
				rep.Consumed, rc.Tokens))
		}
		return nil
	}
	if w.Config.Metering == "required" {
		return &exitcode.CannotRunError{Err: fmt.Errorf("report: metering: required, and the meter at %s gave no receipt for invocation %s: %v; "+
			"nothing was written",
			m.Base, rep.Invocation, err)}
	}
	w.res.Notes = append(w.res.Notes, fmt.Sprintf("no meter receipt in the footer: %v", err))
	return nil
}

// meter uses the agent's token; nil without meter-url.
func (w *reporter) meter() *meterclient.Client {
	if w.Config.MeterURL == "" {
		return nil
	}
	return &meterclient.Client{Base: w.Config.MeterURL, Token: w.req.MeterToken}
}
