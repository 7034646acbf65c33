package meter

import (
	"context"
	"net/http"

	"github.com/gns-guard/gns-guard/internal/briefing"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/live"
	"github.com/gns-guard/gns-guard/internal/metering"
	"github.com/gns-guard/gns-guard/internal/scopes"
)

// gateContext answers GET /OWNER/NAME/issues/N/gate/context: the entry
// load, as gns-guard context assembles it, read with the agent's own
// token (reading needs no gate; this serves MCP clients).
func (m *Meter) gateContext(w http.ResponseWriter, r *http.Request) {
	a := askOf(r)
	text, ref := m.entryLoad(r.Context(), a)
	if ref != nil {
		gateFail(w, ref, nil)
		return
	}
	gateAnswer(w, http.StatusOK, map[string]any{"issue": a.n, "context": text})
}

// entryLoad assembles issue n's entry load.
func (m *Meter) entryLoad(ctx context.Context, a gateAsk) (string, *metering.Refusal) {
	n := a.n
	c, ref := m.gateCaller(ctx, a, false)
	if ref != nil {
		return "", ref
	}
	rd := &live.Reader{Forge: c.login.client, Admin: c.login.client, Keys: ledger.ConfigKeys(c.cfg),
		Where: live.Where{Verb: "context", Server: m.o.Server, Repo: c.repo.name, Token: "the agent's token", Needs: scopes.Agent.Needs()}}
	iss, err := briefing.Read(ctx, rd, n, c.cfg)
	if err != nil {
		return "", refusalOf(err)
	}
	res, err := briefing.Assemble(ctx, briefing.Request{Issue: iss, Config: c.cfg, Now: m.o.Now})
	if err != nil {
		return "", refusalOf(err)
	}
	return res.Text(), nil
}
