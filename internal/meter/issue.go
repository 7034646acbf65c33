package meter

import (
	"context"
	"fmt"
	"strconv"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/live"
	"github.com/gns-guard/gns-guard/internal/metering"
	"github.com/gns-guard/gns-guard/internal/meterstore"
	"github.com/gns-guard/gns-guard/internal/scopes"
)

// standing is an issue's judgement and the configuration it used.
type standing struct {
	metering.Standing
	cfg config.Config
}

// standingOf reads iss through the live reader as every verb does,
// decides it as the guard would, and judges it; kept IssueTTL. It marks
// the checkpoint's recorded invocations reported, which fixes the base.
func (m *Meter) standingOf(ctx context.Context, c Client, iss meterstore.Issue, repo string) (*standing, error) {
	key := iss.Repo + "#" + strconv.FormatInt(iss.Number, 10)
	return m.issues.get(key, func() (*standing, error) {
		rd := m.reader(c, repo)
		cfg, err := configOf(ctx, rd)
		if err != nil {
			return nil, err
		}
		rd.Keys = ledger.ConfigKeys(cfg)
		s, err := rd.Read(ctx, iss.Number, live.ReadOptions{Window: cfg.RecentWindow()})
		if err != nil {
			return nil, err
		}
		f := metering.Facts{Issue: s.Issue, Governed: s.Governed, Grace: cfg.UnjudgedGrace}
		if s.Governed {
			if p := checkpoint.Parse(s.Issue.Body, checkpoint.Options{Issue: iss.Number, MaxBytes: cfg.MaxCheckpointBytes}); p.Valid() {
				f.Checkpoint = p.Checkpoint
			}
			in := s.Input(cfg, issues.Event{}, repo, m.o.Now(), m.counter(cfg.Encoding))
			if f.Plan, _, err = rd.Decide(ctx, in); err != nil {
				return nil, err
			}
			f.Unjudged = rd.Unjudged(ctx, s, cfg, m.o.Now())
			if s.Status != nil {
				l, _ := s.RecordOf(s.Status, rd.Keys)
				f.Judged = l != nil
			}
		}
		st := &standing{Standing: metering.Judge(f), cfg: cfg}
		if f.Checkpoint != nil {
			if st.Base, err = m.o.Store.MarkReported(ctx, iss, f.Checkpoint.Budget.Consumed.Value, recorded(f.Checkpoint)); err != nil {
				return nil, fmt.Errorf("the store: %w", err)
			}
		}
		return st, nil
	})
}

// reader is the live reader of repo with an agent's client.
func (m *Meter) reader(c Client, repo string) *live.Reader {
	return &live.Reader{Forge: c, Admin: c, Where: live.Where{Verb: "meter", Server: m.o.Server, Repo: repo,
		Token: "the agent's token (the API key)", Needs: scopes.Agent.Needs()}}
}

// recorded are the invocations a checkpoint records.
func recorded(cp *checkpoint.Checkpoint) []string {
	var out []string
	if v := cp.LastInvocation.Value; v != "" {
		out = append(out, v)
	}
	for _, e := range cp.Entries() {
		if v := e.Invocation.Value; v != "" {
			out = append(out, v)
		}
	}
	return out
}

// configOf is the repository's configuration, read through rd.
func configOf(ctx context.Context, rd *live.Reader) (config.Config, error) {
	res, _, err := rd.Config(ctx, nil, live.ConfigOptions{})
	return res.Config, err
}
