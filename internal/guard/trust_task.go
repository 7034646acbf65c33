package guard

import (
	"slices"
	"strings"
	"time"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/entryload"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/markdown"
)

// The task is the person's (docs/ledger.md#the-task): the record holds
// the digests of the body's task section and of the title as accepted. A
// change by anyone who is not an approver is tampering; who made it is
// read from the body's edit history and the title's timeline entries,
// which the shell reads when asked (Plan.AskTask).

// TaskAsk is the body's edit history and title changes since a time.
type TaskAsk struct {
	Body, Title bool
	Since       time.Time
}

// TaskEdits is the shell's answer to Plan.AskTask.
type TaskEdits struct {
	// Revisions are oldest first; BodyProblem says why unread.
	Revisions   []issues.Revision
	BodyProblem string
	// Titles are changes since acceptance, oldest first; TitleProblem says
	// why unread.
	Titles       []issues.TitleChange
	TitleProblem string
}

// TaskVerdict judges a task changed since accepted.
type TaskVerdict struct {
	// Changed: task section or title differs, not by approvers alone.
	Changed bool
	// By are who changed it, as the history says ("" unknown).
	By []string
	// Accepted is the accepted task section from edit history; "" if absent.
	Accepted string
	// Body and Title say which changed.
	Body, Title bool
}

// TaskDigest is what a record keeps of the task section.
func TaskDigest(body string) string {
	return ledger.Digest([]string{"task", entryload.TaskSection(body)})
}

// TitleDigest is what a record keeps of the title.
func TitleDigest(title string) string { return ledger.Digest([]string{"title", title}) }

// checkTask: unchanged, changed by approvers (accepted), or by others
// (Plan.Task, a finding).
func (e *decision) checkTask() {
	l := e.trust.ledger
	if l == nil || !l.Baseline || e.trust.problem != "" || l.Task == "" {
		return // a record from before the task was kept: adopted as it is
	}
	v := &TaskVerdict{Body: TaskDigest(e.in.Issue.Body) != l.Task, Title: l.Title != "" && TitleDigest(e.in.Issue.Title) != l.Title}
	if !v.Body && !v.Title {
		return
	}
	te := e.in.TaskEdits
	if te == nil {
		e.plan.AskTask = &TaskAsk{Body: v.Body, Title: v.Title, Since: time.Unix(l.TaskSince, 0)}
		te = &TaskEdits{BodyProblem: "not read yet", TitleProblem: "not read yet"}
	}
	unknown := false
	if v.Body {
		v.By, v.Accepted, unknown = bodyChangers(l.Task, te)
		live := TaskDigest(e.in.Issue.Body)
		if ed := e.bodyEditor(func(saved string) bool { return TaskDigest(saved) == live }); unknown && ed != "" {
			v.By, unknown = []string{ed}, false
		}
	}
	if v.Title {
		by, u := titleChangers(l.Title, te)
		v.By, unknown = append(v.By, by...), unknown || u
	}
	// An approver's edit is accepted.
	v.Changed = unknown || len(v.By) == 0 || slices.ContainsFunc(v.By, func(a string) bool { return !e.isApprover(a) })
	e.plan.Task = v
}

// bodyEditor is who saved the body, from the run's own event, when the edit
// history cannot say (Gitea shows it to signed-in readers of public
// repositories only): a first attempt's issues.edited payload whose body same
// accepts. Only the editor starts such a run. "" when the event does not say
// (docs/ledger.md#the-task).
func (e *decision) bodyEditor(same func(saved string) bool) string {
	ev := e.in.Event
	if ev.Name != "issues" || ev.Action != "edited" || ev.Attempt != 1 || ev.Saved == nil || ev.Sender == "" || !same(ev.Saved.Body) {
		return ""
	}
	return ev.Sender
}

// taskTampered adds a finding for an unallowed task change.
func (e *decision) taskTampered() {
	if v := e.plan.Task; v != nil && v.Changed {
		e.trust.tamper = append(e.trust.tamper, e.taskFinding(v))
	}
}

// EntryTask is the task the entry load holds in place of the body's, and
// why: the accepted one, when the body's was changed by someone who may
// not and its edit history holds the accepted text; "" otherwise.
func (p *Plan) EntryTask() (task, note string) {
	v := p.Task
	if v == nil || !v.Changed || v.Accepted == "" {
		return "", ""
	}
	return v.Accepted, "as the guard accepted it; the body's was changed since by " + v.Who()
}

// bodyChangers reads the body's edit history after its last revision
// whose task section is the accepted one (digest accepted): who made each
// revision that changed the task (a revision deleted from the history
// counts as one), and the accepted task's text. unknown says the history
// cannot tell.
func bodyChangers(accepted string, te *TaskEdits) (by []string, text string, unknown bool) {
	if te.BodyProblem != "" {
		return nil, "", true
	}
	rs := te.Revisions
	i := len(rs) - 1
	for ; i >= 0 && (rs[i].Deleted || TaskDigest(rs[i].Text) != accepted); i-- {
	}
	if i < 0 {
		return nil, "", true
	}
	text, prev := entryload.TaskSection(rs[i].Text), accepted
	for _, r := range rs[i+1:] {
		d := ""
		if !r.Deleted {
			d = TaskDigest(r.Text)
		}
		if d != prev || d == "" {
			by = append(by, r.Editor)
			unknown = unknown || r.Editor == ""
		}
		prev = d
	}
	return by, text, unknown || len(by) == 0
}

// Who names who changed the task.
func (v *TaskVerdict) Who() string {
	if len(v.By) == 0 {
		return "someone the guard could not identify (the body's edit history, which Gitea shows only on a public repository, or the " +
			"title's timeline entries do not say)"
	}
	var names []string
	for _, b := range v.By {
		q := "someone unknown"
		if b != "" {
			q = markdown.Quote(b)
		}
		if !slices.Contains(names, q) {
			names = append(names, q)
		}
	}
	return strings.Join(names, ", ")
}

// Step is what an approver does about a changed task: with no one to
// name, save the body again (its run names the approver); else restore
// the task, or remove permission::violation to accept the new one.
func (v *TaskVerdict) Step() string {
	if len(v.By) == 0 {
		return "an approver checks the task and saves the issue's body again (any edit: its run names the approver, who accepts the " +
			"task as saved), or restores the task as accepted"
	}
	return "an approver restores it, or removes permission::violation to accept the new one"
}

// taskFinding is for an unallowed task change.
func (e *decision) taskFinding(v *TaskVerdict) Violation {
	var what []string
	if v.Body {
		what = append(what, "the body's ## Task section")
	}
	if v.Title {
		what = append(what, "the title")
	}
	pv := e.cfg.Labels.PermissionViolation
	restore := "restores the task as accepted"
	if v.Accepted != "" {
		restore = "restores the task as accepted (the body's edit history holds it; gns-guard context loads it meanwhile)"
	}
	if len(v.By) == 0 {
		// No one to name: the edit's own run never reached the guard, and
		// the server shows no history. The chain waits for an approver's
		// save, without permission::violation on a team that did nothing
		// wrong.
		return at(checkpointTaskPos(e.in.Issue.Body), "task", "the task (%s) was changed since the guard accepted it, and the guard "+
			"cannot tell by whom: the edit's own run did not reach it (a later event replaced it in the workflow's concurrency group) and "+
			"Gitea shows the body's edit history only on a public repository. The workflow waits for an approver (%s): check the task and "+
			"save the issue's body again (any edit; its run names the approver, who accepts the task as saved), or restore the task as accepted",
			strings.Join(what, " and "), e.cfg.Approvers())
	}
	t := at(checkpointTaskPos(e.in.Issue.Body), "task", "the task (%s) was changed since the guard accepted it, by %s: the task is "+
		"the person's, and only an approver (%s) changes it. An approver %s, or checks the new task and removes %s to accept it",
		strings.Join(what, " and "), v.Who(), e.cfg.Approvers(), restore, pv)
	t.Label = pv
	return t
}

// checkpointTaskPos is the task heading's position.
func checkpointTaskPos(body string) checkpoint.Pos {
	for i, line := range strings.Split(body, "\n") {
		if strings.EqualFold(strings.TrimSpace(strings.TrimLeft(line, "#")), entryload.TaskHeading) && strings.HasPrefix(strings.TrimSpace(line), "#") {
			return checkpoint.Pos{Line: i + 1, Col: 1}
		}
	}
	return checkpoint.Pos{Line: 1, Col: 1}
}

// titleChangers changed the title from the accepted one on; unknown: the
// timeline lacks it.
func titleChangers(accepted string, te *TaskEdits) (by []string, unknown bool) {
	if te.TitleProblem != "" {
		return nil, true
	}
	i := slices.IndexFunc(te.Titles, func(c issues.TitleChange) bool { return TitleDigest(c.Old) == accepted })
	if i < 0 {
		return nil, true
	}
	for _, c := range te.Titles[i:] {
		by = append(by, c.Actor)
		unknown = unknown || c.Actor == ""
	}
	return by, unknown
}
