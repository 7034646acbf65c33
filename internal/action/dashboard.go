package action

import (
	"context"
	"strings"

	"github.com/gns-guard/gns-guard/internal/dashboard"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/live"
	"github.com/gns-guard/gns-guard/internal/settings"
	"github.com/gns-guard/gns-guard/internal/version"
)

// dashboard runs `mode: dashboard`: it judges every open governed issue as
// the guard would, writing nothing to them, and keeps the dashboard issue,
// as `gns-guard status --publish` does. It fails only when it could not
// run; each issue's own runs fail for its violations.
func (r *runner) dashboard(ctx context.Context, apiURL, token, owner, name string, set settings.Resolved) error {
	if ev := r.event.Name; ev != "schedule" && ev != "workflow_dispatch" {
		r.log.infof("gns-guard: nothing to do: mode dashboard keeps the dashboard on schedule and workflow_dispatch runs, not on %q events", ev)
		r.kit.output("result", "skipped")
		return nil
	}
	fg, err := r.o.NewForge(apiURL, token, owner, name)
	if err != nil {
		return err
	}
	r.hold(fg)
	rd := &live.Reader{
		Forge:        fg,
		Admin:        fg,
		Where:        guardWhere(apiURL, r.repo),
		TokenIsGuard: true,
		Keys:         ledger.ConfigKeys(set.Config),
	}
	if set.AdminToken != "" {
		admin, err := r.o.NewForge(apiURL, set.AdminToken, owner, name)
		if err != nil {
			return err
		}
		r.hold(admin)
		rd.Admin = admin
	}
	// The guard's user writes the dashboard and the issues' status
	// comments: the Actions user for the Actions token (no request), else
	// the token's own user (one request, not one an issue).
	login := issues.ActionsUser
	if t := r.o.Getenv(ActionsTokenEnv); t == "" || t != token {
		if login, err = fg.Self(ctx); err != nil {
			return rd.Where.Error("look up the token's user", err)
		}
	}
	rd.Guard = login
	set, _, err = rd.Config(ctx, nil, live.ConfigOptions{Commit: r.o.Getenv("GITHUB_SHA"), Top: []settings.Layer{r.inputs}})
	if err != nil {
		return err
	}
	rd.Keys = ledger.ConfigKeys(set.Config) // the file may publish ledger-public-key
	sw := &dashboard.Sweep{
		Reader: rd, Lister: fg, Config: set.Config, Repo: r.repo, Now: r.o.Now, ServerNow: fg.ServerTime, Workflows: fg,
		Skip: func(is issues.Issue, author string) bool { return dashboard.IsDashboard(is, author, login) },
	}
	if text, ok := strings.CutPrefix(r.o.Getenv(GrantsEnv), grantsPrefix); ok {
		sw.Grants = ledger.GrantState{Known: true, Text: text}
	}
	res, err := sw.Run(ctx)
	if err != nil {
		return err
	}
	body := dashboard.Body(res, version.String())
	if set.Config.DryRun {
		r.log.infof("gns-guard: dry run: the dashboard issue would be written (%d characters); nothing was written", len(body))
		r.log.untrusted(dashboard.Text(res))
		r.kit.output("result", "pass")
		return nil
	}
	kept, err := dashboard.Keep(ctx, fg, res.Listed, login, body)
	if err != nil {
		return rd.Where.Error("keep the dashboard issue", err)
	}
	r.log.infof("gns-guard: dashboard issue #%d %s: %s (of %d open)", kept.Number, kept.Action, dashboard.OpenGoverned(len(res.Rows)), res.Open)
	r.log.untrusted(dashboard.Text(res))
	r.kit.summary(dashboard.Markdown(res))
	r.kit.output("result", "pass")
	return nil
}
