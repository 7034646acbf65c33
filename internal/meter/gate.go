package meter

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/meterclient"
	"github.com/gns-guard/gns-guard/internal/metering"
	"github.com/gns-guard/gns-guard/internal/meterstore"
	"github.com/gns-guard/gns-guard/internal/port"
)

// GateOptions serve the gate (docs/gate.md): agents holding read access
// write through it, and what passes is written with Token.
type GateOptions struct {
	// Token is the gate account's Gitea token (setting gate-account).
	Token string
	// Connect makes a client of owner/name that writes with token.
	Connect func(server, token, owner, name string) (port.Forge, error)
}

// gateRoutes serves the gate's endpoints and its MCP server.
func (m *Meter) gateRoutes(mux *http.ServeMux) {
	if m.o.Gate == nil {
		return
	}
	mux.HandleFunc("POST /{owner}/{name}/issues/{n}/gate/spawn", serveGate(http.StatusCreated, false, m.spawn))
	mux.HandleFunc("POST /{owner}/{name}/issues/{n}/gate/report", serveGate(http.StatusOK, true, m.report))
	mux.HandleFunc("POST /{owner}/{name}/issues/{n}/gate/subissue", serveGate(http.StatusCreated, false, m.subIssue))
	mux.HandleFunc("GET /{owner}/{name}/issues/{n}/gate/context", m.gateContext)
	mux.Handle("/mcp", m.gateMCP())
}

// gateAsk is who asks the gate about which issue, and the meter's
// address as the agent reached it.
type gateAsk struct {
	token, owner, name, base string
	n                        int64
}

// askOf is r's ask.
func askOf(r *http.Request) gateAsk {
	n, _ := strconv.ParseInt(r.PathValue("n"), 10, 64)
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return gateAsk{token: agentToken(r), owner: r.PathValue("owner"), name: r.PathValue("name"), base: scheme + "://" + r.Host, n: n}
}

// serveGate decodes a request's JSON, does it, and answers out with
// status, or the refusal. wrap puts out under "result", where a refused
// report keeps its findings.
func serveGate[Req, Out any](status int, wrap bool, do func(context.Context, gateAsk, Req) (Out, *metering.Refusal)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req Req
		if ref := readJSON(r, &req); ref != nil {
			gateFail(w, ref, nil)
			return
		}
		out, ref := do(r.Context(), askOf(r), req)
		switch {
		case ref != nil && wrap:
			gateFail(w, ref, out)
		case ref != nil:
			gateFail(w, ref, nil)
		case wrap:
			gateAnswer(w, status, map[string]any{"result": out})
		default:
			gateAnswer(w, status, out)
		}
	}
}

// gateCall is one agent's request to the gate: who, which issue, and
// the issue's standing as the meter judges it.
type gateCall struct {
	owner, name string
	n           int64
	login       login
	repo        repository
	iss         meterstore.Issue
	cfg         config.Config
	// st is the issue's standing, read for a spawn only.
	st *standing
}

// maxGateRequest bounds a request's JSON: a report's result and texts.
const maxGateRequest = 2 << 20

// gateCaller authenticates the agent with its own token, as the meter
// does, and reads the repository's configuration, and with standing the
// issue's standing. In the gated posture who may write through the gate
// is who agents maps (docs/gate.md#who-may-use-it).
func (m *Meter) gateCaller(ctx context.Context, a gateAsk, standing bool) (*gateCall, *metering.Refusal) {
	token, owner, name, n := a.token, a.owner, a.name, a.n
	if !m.inScope(owner, name) {
		return nil, m.outOfScope(owner, name)
	}
	if n < 1 {
		return nil, &metering.Refusal{Status: 404, Kind: metering.KindNotFound, Rule: "meter-route", Message: "the issue number must be 1 or more"}
	}
	l, err := m.resolve(ctx, token, owner, name)
	switch {
	case err != nil:
		return nil, unavailable("could not ask Gitea who the key belongs to", err)
	case l.name == "":
		return nil, l.refusal
	}
	c := &gateCall{owner: owner, name: name, n: n, login: l}
	if c.repo, err = m.repositoryOf(ctx, l.client, owner, name); err != nil {
		return nil, readFailed(n, err)
	}
	c.iss = meterstore.Issue{Repo: c.repo.key(), Number: n}
	if standing {
		c.st, err = m.standingOf(ctx, l.client, c.iss, c.repo.name)
		if c.st != nil {
			c.cfg = c.st.cfg
		}
	} else {
		c.cfg, err = configOf(ctx, m.reader(l.client, c.repo.name))
	}
	if err != nil {
		return nil, readFailed(n, err)
	}
	if ref := gatedAgent(c.cfg, l, c.repo.name); ref != nil {
		return nil, ref
	}
	return c, nil
}

// gatedAgent refuses a repository not in the gated posture, and a login
// the meter would not let spend there: one code decides who may act.
func gatedAgent(cfg config.Config, l login, repo string) *metering.Refusal {
	if !cfg.Gated() {
		return &metering.Refusal{Status: 409, Kind: metering.KindPermission, Rule: "gate-off", Message: fmt.Sprintf(
			"%s is not in the gated posture (its gate-account setting is empty): agents write the issue themselves, with gns-guard report", repo)}
	}
	return l.mayNotSpend(cfg, repo)
}

// gateConn is the gate account's client of a repository and its login.
type gateConn struct {
	client port.Forge
	self   string
}

// gateClient is the gate account's client of the call's repository, and
// its login, which must be gate-account's; kept LoginTTL a repository.
func (m *Meter) gateClient(ctx context.Context, c *gateCall) (port.Forge, string, *metering.Refusal) {
	g, err := m.gates.get(strings.ToLower(c.owner+"/"+c.name), func() (gateConn, error) {
		fc, err := m.o.Gate.Connect(m.o.Server, m.o.Gate.Token, c.owner, c.name)
		if err != nil {
			return gateConn{}, fmt.Errorf("the gate's Gitea client: %w", err)
		}
		self, err := fc.Self(ctx)
		if err != nil {
			return gateConn{}, fmt.Errorf("could not ask Gitea whose the gate's token is: %w", err)
		}
		return gateConn{client: fc, self: self}, nil
	})
	if err != nil {
		return nil, "", unavailable("the gate", err)
	}
	if want := c.cfg.GateAccount; !strings.EqualFold(g.self, want) {
		return nil, "", &metering.Refusal{Status: 503, Kind: metering.KindUnavailable, Rule: "gate-account", Message: fmt.Sprintf(
			"the gate's token is %s's, but gate-account names %s: the operator starts the gate with %s's token", g.self, want, want)}
	}
	return g.client, g.self, nil
}

// opened is an invocation the gate opened for login on the issue, or a
// refusal.
func (m *Meter) opened(ctx context.Context, c *gateCall, inv string) (meterstore.Opened, *metering.Refusal) {
	o, ok, err := m.o.Store.OpenedInvocation(ctx, c.iss, inv)
	switch {
	case err != nil:
		return o, unavailable("the store", err)
	case !ok:
		return o, &metering.Refusal{Status: 403, Kind: metering.KindPermission, Rule: "gate-unopened", Message: fmt.Sprintf(
			"the gate never opened invocation %q on issue #%d: ask it for one (gns-guard spawn)", inv, c.n)}
	case !strings.EqualFold(o.Login, c.login.name):
		return o, &metering.Refusal{Status: 403, Kind: metering.KindPermission, Rule: "gate-unopened", Message: fmt.Sprintf(
			"invocation %q was opened for %s, not %s", inv, o.Login, c.login.name)}
	}
	return o, nil
}

// readJSON decodes a request's JSON strictly.
func readJSON(r *http.Request, v any) *metering.Refusal {
	dec := json.NewDecoder(io.LimitReader(r.Body, maxGateRequest))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return &metering.Refusal{Status: 400, Kind: metering.KindInvalid, Rule: "gate-request",
			Message: "the request is not the JSON the gate takes: " + err.Error()}
	}
	return nil
}

// gateFail answers a refusal as the gate's clients read it.
func gateFail(w http.ResponseWriter, ref *metering.Refusal, result any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(ref.Status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": meterclient.GateRefusal{Rule: ref.Rule, Message: ref.Message}, "result": result})
}

// gateAnswer answers v with status.
func gateAnswer(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// refusalOf is an error's refusal: its exit code's class as a status.
func refusalOf(err error) *metering.Refusal {
	var ue *exitcode.UsageError
	var ve *exitcode.ViolationError
	switch {
	case errors.As(err, &ue):
		return &metering.Refusal{Status: 400, Kind: metering.KindInvalid, Rule: "gate-request", Message: err.Error()}
	case errors.As(err, &ve):
		return &metering.Refusal{Status: 422, Kind: metering.KindPermission, Rule: meterclient.RefusedReport, Message: err.Error()}
	}
	return unavailable("the gate", err)
}

// newInvocation names an invocation the gate opens.
func newInvocation() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return "gate-" + hex.EncodeToString(b)
}
