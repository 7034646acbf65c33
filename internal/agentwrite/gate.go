package agentwrite

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/meterclient"
)

// Spawn asks the gate for an invocation; Spawned is what it opened
// (docs/gate.md#spawn).
type (
	Spawn   = meterclient.GateSpawn
	Spawned = meterclient.GateSpawned
)

// Gate is the gate the repository's settings name, reached with the
// agent's own token: it judges and writes for an agent that only reads.
type Gate struct {
	verb   string
	client meterclient.Client
	owner  string
	name   string
}

// GateOf is the gate of c's configuration; a usage error (exit 2) when
// the repository is not in the gated posture.
func GateOf(verb string, c Conn, token string) (*Gate, error) {
	cfg := c.Config
	if !cfg.Gated() || cfg.MeterURL == "" {
		return nil, usageError("%s: the repository is not in the gated posture: its settings name no gate-account "+
			"and meter-url (docs/gate.md)", verb)
	}
	owner, name, _ := strings.Cut(c.Reader.Where.Repo, "/")
	return &Gate{verb: verb, client: meterclient.Client{Base: cfg.MeterURL, Token: token}, owner: owner, name: name}, nil
}

// Spawn opens an invocation on issue n.
func (g *Gate) Spawn(ctx context.Context, n int64, sp Spawn) (Spawned, error) {
	out, err := g.client.Spawn(ctx, g.owner, g.name, n, sp)
	if err != nil {
		return out, g.error(err)
	}
	return out, nil
}

// Report sends req to the gate: report's result as the gate wrote it,
// ErrRefused with the findings when the guard would fail it.
func (g *Gate) Report(ctx context.Context, req ReportRequest) (*ReportResult, error) {
	if req.Force {
		return nil, usageError("report: --force: the gate writes only what the guard would pass")
	}
	data, err := g.client.Report(ctx, g.owner, g.name, req.Issue, meterclient.GateReportOf(req.Report, req.DryRun))
	var answer struct {
		Result *ReportResult `json:"result"`
	}
	if jerr := json.Unmarshal(data, &answer); jerr != nil || answer.Result == nil {
		if err != nil {
			return nil, g.error(err)
		}
		return nil, &exitcode.CannotRunError{Err: fmt.Errorf("report: the gate's answer holds no result: %v", jerr)}
	}
	var ref *meterclient.GateRefusal
	switch {
	case errors.As(err, &ref) && ref.Rule == meterclient.RefusedReport:
		err = ErrRefused
	case err != nil:
		err = g.error(err)
	}
	return answer.Result, err
}

// error is a gate's refusal with its exit code: a request the gate
// cannot read is exit 2, a refusal by a rule exit 1, the rest exit 3.
func (g *Gate) error(err error) error {
	var ref *meterclient.GateRefusal
	if !errors.As(err, &ref) {
		return &exitcode.CannotRunError{Err: fmt.Errorf("%s: %w", g.verb, err)}
	}
	e := fmt.Errorf("%s: the gate refused: %s", g.verb, ref.Error())
	switch {
	case ref.Status == 400:
		return &exitcode.UsageError{Err: e}
	case ref.Status >= 500 || ref.Status == 0:
		return &exitcode.CannotRunError{Err: e}
	}
	return &exitcode.ViolationError{Err: e}
}
