package meter

import (
	"strconv"
	"strings"
	"time"

	"github.com/gns-guard/gns-guard/internal/metering"
)

// logCall writes the call's log line, never the prompt, the answer's text
// or a key. Appended, not formatted: it runs every call.
func (m *Meter) logCall(x *exchange) {
	end := x.ended
	if end.IsZero() {
		end = m.o.Now()
	}
	took := end.Sub(x.started).Round(time.Millisecond)
	outcome := x.outcome
	if outcome == "" {
		outcome = "ok"
	}
	if m.metrics != nil {
		m.metrics.record(x, outcome)
	}
	b := make([]byte, 0, 256)
	b = x.started.UTC().AppendFormat(b, time.RFC3339)
	b = append(append(append(b, " meter: "...), x.repoName()...), '#')
	b = strconv.AppendInt(b, x.route.Issue, 10)
	b = append(append(b, " inv="...), q(x.route.Invocation)...)
	b = append(append(b, " login="...), q(x.login.name)...)
	b = append(append(b, " agent="...), q(x.agent)...)
	b = append(append(append(append(b, ' '), x.route.Provider...), '/'), x.route.Endpoint...)
	b = append(append(b, " model="...), q(x.call.Model)...)
	for _, f := range []struct {
		name string
		n    int64
	}{{" status=", int64(x.status)}, {" in=", x.usage.Input}, {" cached=", x.usage.Cached}, {" out=", x.usage.Output}, {" charged=", x.charged}} {
		b = strconv.AppendInt(append(b, f.name...), f.n, 10)
	}
	b = append(append(b, " cost="...), metering.Dollars(x.cost)...)
	b = append(append(b, " took="...), took.String()...)
	b = append(append(b, " req="...), q(x.reqID)...)
	b = append(append(append(b, ' '), outcome...), '\n')
	m.logMu.Lock()
	defer m.logMu.Unlock()
	_, _ = m.o.Log.Write(b)
}

// q quotes outside values so a line stays one.
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
