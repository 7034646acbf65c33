package meter

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gns-guard/gns-guard/internal/metering"
)

// logCall writes the call's one log line: who, which issue and
// invocation, the model, the answer, the tokens and the time. Never the
// prompt, the answer's text or a key.
func (m *Meter) logCall(x *exchange) {
	took := m.o.Now().Sub(x.started).Round(time.Millisecond)
	outcome := x.outcome
	if outcome == "" {
		outcome = "ok"
	}
	line := fmt.Sprintf("%s meter: %s#%d inv=%s login=%s agent=%s %s/%s model=%s status=%d in=%d cached=%d out=%d charged=%d cost=%s took=%s req=%s %s\n",
		x.started.UTC().Format(time.RFC3339), x.repoName(), x.route.Issue, q(x.route.Invocation), q(x.login.name), q(x.agent),
		x.route.Provider, x.route.Endpoint, q(x.call.Model), x.status, x.usage.Input, x.usage.Cached, x.usage.Output, x.charged,
		metering.Dollars(x.cost), took, q(x.reqID), outcome)
	if m.metrics != nil {
		m.metrics.record(x, outcome)
	}
	m.logMu.Lock()
	defer m.logMu.Unlock()
	_, _ = m.o.Log.Write([]byte(line))
}

// q quotes a value from outside when it needs it, so a line stays one
// line.
func q(s string) string {
	if s == "" {
		return "-"
	}
	quoted := strconv.Quote(s)
	if quoted[1:len(quoted)-1] == s && len(s) <= 200 && !strings.ContainsAny(s, " =") {
		return s
	}
	if len(quoted) > 202 {
		quoted = quoted[:200] + "…\""
	}
	return quoted
}
