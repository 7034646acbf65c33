package meter

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/gns-guard/gns-guard/internal/meterclient"
	"github.com/gns-guard/gns-guard/internal/metering"
	"github.com/gns-guard/gns-guard/internal/meterstore"
	"github.com/gns-guard/gns-guard/internal/receipt"
)

// receipt answers GET /OWNER/NAME/issues/N/invocations/ID/receipt: the
// invocation's signed total, for any writer.
func (m *Meter) receipt(w http.ResponseWriter, r *http.Request) {
	inv := r.PathValue("inv")
	n, ok := issueNumber(w, r)
	if !ok {
		return
	}
	repo, ok := m.writersRepository(w, r)
	if !ok {
		return
	}
	t, err := m.invocationTotals(r.Context(), meterstore.Issue{Repo: repo.key(), Number: n}, inv)
	if err != nil {
		fail(w, unavailable("the store", err))
		return
	}
	rc := m.signReceipt(repo.name, n, inv, t)
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(rc)
}

// signReceipt signs invocation inv's totals t on issue n of repo.
func (m *Meter) signReceipt(repo string, n int64, inv string, t meterstore.Totals) receipt.Receipt {
	return m.o.Key.Sign(receipt.Receipt{Repo: repo, Issue: n, Invocation: inv, Login: t.Login, Agent: t.Agent,
		Calls: t.Calls, Tokens: t.Tokens, Input: t.Input, Cached: t.Cached, Output: t.Output, Reasoning: t.Reasoning,
		WorstCase: t.WorstCase, Cost: t.Cost, Issued: m.o.Now().Unix()})
}

// statement answers GET /OWNER/NAME/issues/N/metered: the issue's spend by
// invocation and its base, signed, for any writer. The guard holds the
// checkpoint to it (docs/meter.md#the-issues-metered-total).
func (m *Meter) statement(w http.ResponseWriter, r *http.Request) {
	n, ok := issueNumber(w, r)
	if !ok {
		return
	}
	repo, ok := m.writersRepository(w, r)
	if !ok {
		return
	}
	iss := meterstore.Issue{Repo: repo.key(), Number: n}
	m.settled(r.Context(), iss, "")
	base, seen, lines, err := m.o.Store.Statement(r.Context(), iss)
	if err != nil {
		fail(w, unavailable("the store", err))
		return
	}
	st := receipt.Statement{Repo: repo.name, Issue: n, Seen: seen, Base: base, Invocations: []receipt.Spent{}, Issued: m.o.Now().Unix()}
	for _, l := range lines {
		st.Invocations = append(st.Invocations, receipt.Spent{Invocation: l.Invocation, Login: l.Login, Agent: l.Agent,
			Calls: l.Calls, Tokens: l.Tokens, InFlight: l.InFlight, First: l.First.Unix(), Last: l.Last.Unix()})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(m.o.Key.SignStatement(st))
}

// current answers GET /OWNER/NAME/issues/N/invocations/current: the
// invocation the meter opened for the asker, which report takes without
// --invocation; 404 if none (docs/meter.md#one-configuration-kilo-or-any-openai-sdk).
func (m *Meter) current(w http.ResponseWriter, r *http.Request) {
	n, ok := issueNumber(w, r)
	if !ok {
		return
	}
	repo, who, ok := m.writerAndRepository(w, r)
	if !ok {
		return
	}
	inv, reported, err := m.o.Store.Current(r.Context(), meterstore.Issue{Repo: repo.key(), Number: n}, who)
	switch {
	case err != nil:
		fail(w, unavailable("the store", err))
		return
	case inv == "":
		fail(w, &metering.Refusal{Status: 404, Kind: metering.KindNotFound, Rule: "meter-invocation",
			Message: fmt.Sprintf("%s made no call through the meter on issue #%d with a base URL that names no invocation", who, n)})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(meterclient.Current{Invocation: inv, Reported: reported})
}

// tree answers GET /OWNER/NAME/issues/N/invocations: the invocations the
// gate opened on the issue, oldest first, each with what the meter
// charged it (docs/meter.md#in-the-gated-posture).
func (m *Meter) tree(w http.ResponseWriter, r *http.Request) {
	n, ok := issueNumber(w, r)
	if !ok {
		return
	}
	repo, ok := m.writersRepository(w, r)
	if !ok {
		return
	}
	iss := meterstore.Issue{Repo: repo.key(), Number: n}
	m.settled(r.Context(), iss, "")
	branches, err := m.o.Store.Tree(r.Context(), iss)
	if err != nil {
		fail(w, unavailable("the store", err))
		return
	}
	out := meterclient.Tree{Repo: repo.name, Issue: n, Invocations: []meterclient.Branch{}}
	for _, b := range branches {
		out.Invocations = append(out.Invocations, meterclient.Branch{Invocation: b.Invocation, Parent: b.Parent, Agent: b.Agent,
			Login: b.Login, Depth: b.Depth, Estimate: b.Estimate, Opened: b.Opened.Opened,
			Tokens: b.Tokens, Calls: b.Calls, InFlight: b.InFlight, Cost: b.Cost})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// issueNumber is a GET path's issue number; if invalid, it answers and
// returns false.
func issueNumber(w http.ResponseWriter, r *http.Request) (int64, bool) {
	n, err := strconv.ParseInt(r.PathValue("n"), 10, 64)
	if err != nil || n < 1 {
		fail(w, &metering.Refusal{Status: 404, Kind: metering.KindNotFound, Rule: "meter-route", Message: "the issue number must be 1 or more"})
		return 0, false
	}
	return n, true
}

// writersRepository is a GET path's repository if a writer asks (in the
// gated posture, or a login the agents setting maps); else it answers
// why, ok false.
func (m *Meter) writersRepository(w http.ResponseWriter, r *http.Request) (repo repository, ok bool) {
	repo, _, ok = m.writerAndRepository(w, r)
	return repo, ok
}

// writerAndRepository is writersRepository with the writer's login.
func (m *Meter) writerAndRepository(w http.ResponseWriter, r *http.Request) (repo repository, who string, ok bool) {
	owner, name := r.PathValue("owner"), r.PathValue("name")
	if !m.inScope(owner, name) {
		fail(w, m.outOfScope(owner, name))
		return repo, "", false
	}
	l, err := m.resolve(r.Context(), agentToken(r), owner, name)
	switch {
	case err != nil:
		fail(w, unavailable("could not ask Gitea who the key belongs to", err))
		return repo, "", false
	case l.refusal != nil:
		fail(w, l.refusal)
		return repo, "", false
	}
	if repo, err = m.repositoryOf(r.Context(), l.client, owner, name); err != nil {
		fail(w, unavailable("could not ask Gitea which repository "+owner+"/"+name+" is", err))
		return repo, "", false
	}
	return repo, l.name, true
}

// fail answers a GET's refusal in OpenAI's shape.
func fail(w http.ResponseWriter, ref *metering.Refusal) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(ref.Status)
	_, _ = w.Write(ref.Body(metering.OpenAI))
}

// metered answers GET /OWNER/NAME/metered: every issue's totals, for
// status, to any writer.
func (m *Meter) metered(w http.ResponseWriter, r *http.Request) {
	repo, ok := m.writersRepository(w, r)
	if !ok {
		return
	}
	m.settled(r.Context(), meterstore.Issue{Repo: repo.key()}, "")
	rows, err := m.o.Store.Issues(r.Context(), repo.key())
	if err != nil {
		fail(w, unavailable("the store", err))
		return
	}
	out := []meterclient.IssueMetered{}
	for _, t := range rows {
		out = append(out, meterclient.IssueMetered{Issue: t.Issue.Number, Calls: t.Calls, Tokens: t.Tokens, Cost: t.Cost})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}
