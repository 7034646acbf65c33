package action

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/live"
	"github.com/gns-guard/gns-guard/internal/markdown"
	"github.com/gns-guard/gns-guard/internal/settings"
	"github.com/gns-guard/gns-guard/internal/status"
)

// configureFor resolves the run's configuration for the issue read. A pull
// request that changes the settings file has that file judged too
// (guard.Input.PullSettings). When the default branch's file does not load,
// such a pull request is judged with the defaults, so a fix can merge
// (docs/operations.md#troubleshooting).
func (r *runner) configureFor(ctx context.Context, s *live.Snapshot) error {
	err := r.configure(ctx, s)
	var ue *exitcode.UsageError
	if s.Issue.IsPull && slices.Contains(s.Files, settings.FileName) {
		why, rerr := r.pullSettingsProblem(ctx, s.Issue.Number)
		if rerr != nil {
			return rerr
		}
		r.pullSettings = why
		if errors.As(err, &ue) {
			err = r.configureDefaults(ue)
		}
	}
	if errors.As(err, &ue) {
		r.couldNotJudge(ctx, s, ue)
	}
	return err
}

// pullSettingsProblem reads the settings file at pull request n's head
// and says why it does not load ("" when it does, or the pull request
// removes it).
func (r *runner) pullSettingsProblem(ctx context.Context, n int64) (string, error) {
	data, err := r.forge.PullFile(ctx, n, settings.FileName, settings.MaxFileBytes)
	switch {
	case errors.Is(err, issues.ErrNotFound):
		return "", nil
	case errors.Is(err, issues.ErrTooLarge):
		return fmt.Sprintf("%s: the file is over %d KiB: a configuration file is a few lines", settings.FileName, settings.MaxFileBytes>>10), nil
	case err != nil:
		return "", r.reader.Where.Error(fmt.Sprintf("read %s at the head of pull request #%d", settings.FileName, n), err)
	}
	if err := settings.CheckFile(settings.FileName, data); err != nil {
		return err.Error(), nil
	}
	return "", nil
}

// configureDefaults judges a pull request that changes the settings file
// with the settings' defaults and the inputs, since the default branch's
// file (why) does not load, and says so in the status comment.
func (r *runner) configureDefaults(why *exitcode.UsageError) error {
	set, err := settings.Resolve(r.inputs)
	if err != nil {
		return &exitcode.UsageError{Err: err}
	}
	if err := r.use(set, nil); err != nil {
		return err
	}
	r.notes = append(r.notes, fmt.Sprintf("The default branch's %s does not load (%s). This pull request changes it, so it is judged "+
		"with the settings' defaults and the workflow's inputs; its own file must load.",
		settings.FileName, markdown.Cell(why.Err.Error(), 500)))
	return nil
}

// couldNotJudge edits the issue's status comment, when it has one, to say
// that a configuration error kept the run from judging it: a comment that
// said "all clear" must not go on saying so. None is created.
func (r *runner) couldNotJudge(ctx context.Context, s *live.Snapshot, why *exitcode.UsageError) {
	body, ok := status.CouldNotJudge(s.Issue.Number, s.Status, why.Err.Error())
	if !ok || strings.TrimSpace(body) == strings.TrimSpace(s.Status.Body) {
		return
	}
	if r.cfg.DryRun {
		r.log.infof("gns-guard: would write: the status comment %d says the issue could not be judged", s.Status.ID)
		return
	}
	if _, err := r.forge.EditComment(ctx, s.Status.ID, body); err != nil {
		r.log.infof("gns-guard: warning: the status comment %d could not say that the issue could not be judged: %v", s.Status.ID, err)
		return
	}
	r.log.infof("gns-guard: wrote: the status comment %d says the issue could not be judged", s.Status.ID)
}
