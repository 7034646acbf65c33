package meter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gns-guard/gns-guard/internal/access"
	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/metering"
	"github.com/gns-guard/gns-guard/internal/meterstore"
)

// AgentHeader names the agent the calls are made as (optional).
const AgentHeader = "X-Gns-Agent"

// exchange is one call as it goes through the meter.
type exchange struct {
	route    metering.Route
	repo     repository
	login    login
	agent    string
	call     metering.Call
	st       *standing
	pending  metering.Pending
	id       int64 // the store's row, once reserved
	status   int
	usage    metering.Usage
	reqID    string
	outcome  string
	started  time.Time
	charged  int64
	cost     int64
	hasPrice bool
	// forwarded is when the call went upstream (zero: never);
	// upstreamTook, until its answer ended.
	forwarded    time.Time
	upstreamTook time.Duration
	// firstByte is when the provider's answer began (its headers).
	firstByte time.Time
	// unsent: the call never reached the provider and spent nothing.
	// sent: its request was written whole. timedOut: the answer outlasted
	// HangupRead after the client left.
	unsent         bool
	sent, timedOut atomic.Bool
	// ended is when the answer ended; settling waits for its settlement's
	// commit. settled, then logged, close once it is settled, then logged.
	ended           time.Time
	settling        func() error
	settled, logged chan struct{}
}

// proxy serves a provider's API: admission, the call upstream, settlement.
func (m *Meter) proxy(w http.ResponseWriter, r *http.Request) {
	x := &exchange{started: m.o.Now()}
	route, ref := metering.ParseRoute(r.URL.Path, r.Header.Get(metering.InvocationHeader))
	x.route = route
	if ref == nil && r.Method != http.MethodPost {
		ref = &metering.Refusal{Status: 405, Kind: metering.KindInvalid, Rule: "meter-route", Message: "the metered APIs take POST"}
	}
	if ref == nil {
		ref = m.admit(r, x)
	}
	if ref != nil {
		defer m.logCall(x)
		m.refuse(w, x, ref)
		return
	}
	m.forward(w, r, x)
}

// admit authenticates, reads the body and issue, and reserves the worst case.
func (m *Meter) admit(r *http.Request, x *exchange) *metering.Refusal {
	ctx := r.Context()
	if !m.inScope(x.route.Owner, x.route.Name) {
		return m.outOfScope(x.route.Owner, x.route.Name)
	}
	l, err := m.resolve(ctx, agentToken(r), x.route.Owner, x.route.Name)
	if err != nil {
		return unavailable("could not ask Gitea who the key belongs to", err)
	}
	x.login = l
	if l.refusal != nil {
		return l.refusal
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, metering.MaxBodyBytes))
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return &metering.Refusal{Status: 413, Kind: metering.KindTooLarge, Rule: "meter-request",
			Message: fmt.Sprintf("the request body is over %d MiB", metering.MaxBodyBytes>>20)}
	case err != nil:
		return &metering.Refusal{Status: 400, Kind: metering.KindInvalid, Rule: "meter-request", Message: "the request body could not be read"}
	}
	call, ref := metering.ReadCall(x.route, body, m.callCounter, m.o.DefaultMaxTokens)
	if ref != nil {
		return ref
	}
	x.call = call
	if x.repo, err = m.repositoryOf(ctx, l.client, x.route.Owner, x.route.Name); err != nil {
		return readFailed(x.route.Issue, err)
	}
	iss := meterstore.Issue{Repo: x.repo.key(), Number: x.route.Issue}
	st, err := m.standingOf(ctx, l.client, iss, x.repo.name)
	if err != nil {
		return readFailed(x.route.Issue, err)
	}
	x.st = st
	if ref := l.mayNotSpend(st.cfg, x.route.Repo()); ref != nil {
		return ref
	}
	if ref := m.invocation(ctx, x, iss, strings.TrimSpace(r.Header.Get(AgentHeader))); ref != nil {
		return ref
	}
	// Gated, the gate judged the agent when it opened the invocation: a
	// sub-agent runs with its parent's login.
	if !st.cfg.Gated() && !access.ActsAs(st.cfg.Agents, l.name, x.agent) {
		return &metering.Refusal{Status: 403, Kind: metering.KindPermission, Rule: "agent-impersonated",
			Message: fmt.Sprintf("%s may not spend as agent %q (the setting agents)", l.name, x.agent)}
	}
	return m.reserve(ctx, x, iss)
}

// invocation names the call's invocation and its agent. Ungated, a URL
// that names none spends in the login's open one, as the agent the header
// names. Gated, it must be one the gate opened for the login, as the
// agent the gate opened it for (docs/meter.md#in-the-gated-posture).
func (m *Meter) invocation(ctx context.Context, x *exchange, iss meterstore.Issue, agent string) *metering.Refusal {
	if x.st.cfg.Gated() {
		return m.openedCall(ctx, x, iss, agent)
	}
	if x.route.Invocation == "" {
		var err error
		if x.route.Invocation, err = m.o.Store.Open(ctx, iss, x.login.name); err != nil {
			return unavailable("the store", err)
		}
	}
	x.agent = agent
	return nil
}

// openedCall admits a call of the gated posture in an invocation the gate
// opened for its login; agent, the header's, is empty or the opened one.
func (m *Meter) openedCall(ctx context.Context, x *exchange, iss meterstore.Issue, agent string) *metering.Refusal {
	inv, who := x.route.Invocation, x.login.name
	if inv == "" {
		return unopened("the gate never opened an invocation for this call: the base URL and the " + metering.InvocationHeader +
			" header name none")
	}
	o, ok, err := m.o.Store.OpenedInvocation(ctx, iss, inv)
	switch {
	case err != nil:
		return unavailable("the store", err)
	case !ok:
		return unopened(fmt.Sprintf("the gate never opened invocation %s on issue #%d", inv, iss.Number))
	case !strings.EqualFold(o.Login, who):
		return unopened(fmt.Sprintf("invocation %s was opened for %s, not %s", inv, o.Login, who))
	case agent != "" && agent != o.Agent:
		return &metering.Refusal{Status: 403, Kind: metering.KindPermission, Rule: "agent-impersonated", Message: fmt.Sprintf(
			"invocation %s was opened for agent %q: %s may not spend in it as agent %q (the %s header)", inv, o.Agent, who, agent, AgentHeader)}
	}
	x.agent = o.Agent
	return nil
}

// unopened refuses a call in no invocation the gate opened for it.
func unopened(why string) *metering.Refusal {
	return &metering.Refusal{Status: 403, Kind: metering.KindPermission, Rule: "gate-unopened", Message: why +
		". In the gated posture every call spends in an invocation the gate opened for its login: ask the gate for one " +
		"(gns-guard spawn, or the gate's spawn endpoint) and name its id in the base URL (/invocations/ID/) or the " +
		metering.InvocationHeader + " header"}
}

// reserve admits the call in the store's transaction.
func (m *Meter) reserve(ctx context.Context, x *exchange, iss meterstore.Issue) *metering.Refusal {
	price, ok := x.st.cfg.Prices[x.call.Model]
	x.hasPrice = ok
	money := metering.Money{Price: price, HasPrice: ok, Cap: x.st.cfg.MoneyCap}
	worstCost := int64(0)
	if ok {
		worstCost = metering.WorstCost(x.call, price)
	}
	c := meterstore.Call{Issue: iss, Invocation: x.route.Invocation, Login: x.login.name, Agent: x.agent, Model: x.call.Model,
		Provider: string(x.route.Provider), Endpoint: string(x.route.Endpoint), Worst: x.call.Worst(), Cost: worstCost, Started: x.started}
	id, p, ref, err := m.o.Store.Reserve(ctx, c, func(p metering.Pending) *metering.Refusal {
		return metering.Admit(x.st.Standing, p, x.call, money)
	})
	x.pending = p
	if err != nil {
		return unavailable("the store", err)
	}
	x.id = id
	if id != 0 && m.metrics != nil {
		m.metrics.inFlight.Inc()
	}
	return ref
}

// refuse answers a refusal in the provider's shape.
func (m *Meter) refuse(w http.ResponseWriter, x *exchange, ref *metering.Refusal) {
	x.status, x.outcome = ref.Status, "refused:"+ref.Rule
	h := w.Header()
	m.budgetHeaders(h, x)
	h.Set("Content-Type", "application/json")
	// The official SDKs retry 408, 409, 429 and 5xx unless told not to.
	h.Set("X-Should-Retry", "false")
	w.WriteHeader(ref.Status)
	_, _ = w.Write(ref.Body(x.route.Provider))
}

// budgetHeaders puts the issue's budget on an answer.
func (m *Meter) budgetHeaders(h http.Header, x *exchange) {
	if x.st == nil {
		return
	}
	for k, v := range metering.Headers(x.st.Standing, x.pending) {
		h.Set(k, v)
	}
}

// settle queues the call's settlement: its usage, or its worst case when
// the answer gave none (a 4xx refusal spends nothing). It runs once, as
// the answer ends, before the client can see it end: the client's next
// call is admitted after it. finish waits for its commit.
func (m *Meter) settle(x *exchange) {
	if !x.ended.IsZero() {
		return
	}
	x.ended = m.o.Now()
	m.answered.track(x)
	if x.id == 0 {
		return
	}
	c := meterstore.Call{Issue: meterstore.Issue{Repo: x.repo.key(), Number: x.route.Issue},
		Input: x.usage.Input, Cached: x.usage.Cached, Output: x.usage.Output, Reasoning: x.usage.Reasoning,
		UsageKnown: x.usage.Known, RequestID: x.reqID, Finished: x.ended}
	switch {
	case x.usage.Known:
		c.Tokens = x.usage.Tokens()
	case x.unsent, x.status >= 400 && x.status < 500:
		c.Tokens = 0
	default:
		c.Tokens = x.call.Worst()
		if x.outcome == "" {
			x.outcome = "usage-unread:charged-worst-case"
		}
	}
	if x.hasPrice {
		price := x.st.cfg.Prices[x.call.Model]
		if x.usage.Known {
			c.Cost = metering.Cost(x.usage, price)
		} else if c.Tokens > 0 {
			c.Cost = metering.WorstCost(x.call, price)
		}
	}
	x.charged, x.cost = c.Tokens, c.Cost
	if !x.forwarded.IsZero() {
		x.upstreamTook = c.Finished.Sub(x.forwarded)
	}
	// The client may be gone: settle regardless.
	ctx, cancel := context.WithTimeout(context.Background(), settleWait)
	wait := m.o.Store.SettleLater(ctx, x.id, c)
	x.settling = func() error { defer cancel(); return wait() }
}

// finish waits for the settlement settle queued, then logs the call,
// off the client's path; gone says the client hung up first.
func (m *Meter) finish(x *exchange, gone bool) {
	if x.settling != nil {
		if err := x.settling(); err != nil {
			x.outcome = "settle-failed:" + err.Error()
		}
		if m.metrics != nil {
			m.metrics.inFlight.Dec()
		}
		x.outcome = outcomeOf(x, gone)
	}
	close(x.settled)
	m.logCall(x)
	m.answered.finished(x)
}

// outcomeOf ends a settled call's log line: how client and answer ended,
// and any worst-case charge.
func outcomeOf(x *exchange, gone bool) string {
	var parts []string
	if gone {
		parts = append(parts, "client-gone")
	}
	if x.timedOut.Load() {
		parts = append(parts, "read-limit")
	}
	if x.outcome != "" {
		parts = append(parts, x.outcome)
	}
	if !x.usage.Known && x.charged > 0 && !strings.HasSuffix(x.outcome, "charged-worst-case") {
		parts = append(parts, "charged-worst-case")
	}
	if gone && x.usage.Known {
		parts = append(parts, "usage-read")
	}
	return strings.Join(parts, ":")
}

func firstHeader(h http.Header, names ...string) string {
	for _, n := range names {
		if v := h.Get(n); v != "" {
			return v
		}
	}
	return ""
}

// unavailable is a meter that cannot judge now: 503, retryable.
func unavailable(what string, err error) *metering.Refusal {
	return &metering.Refusal{Status: 503, Kind: metering.KindUnavailable, Rule: "meter-unavailable", Message: fmt.Sprintf("%s: %v", what, err)}
}

// readFailed refuses an issue missing (404) or unreachable (503).
func readFailed(n int64, err error) *metering.Refusal {
	var ue *exitcode.UsageError
	if errors.As(err, &ue) {
		return &metering.Refusal{Status: 404, Kind: metering.KindNotFound, Rule: "meter-issue", Message: fmt.Sprintf("issue #%d: %v", n, err)}
	}
	return unavailable(fmt.Sprintf("could not read issue #%d", n), err)
}
