package meter

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/metering"
	"github.com/gns-guard/gns-guard/internal/meterstore"
	"github.com/gns-guard/gns-guard/internal/receipt"
	"github.com/gns-guard/gns-guard/internal/testkit/fakeforge"
	"github.com/gns-guard/gns-guard/internal/testkit/standin"
)

// judge runs the guard on issue n as its run on "opened" would, and posts
// its status comment with the ledger in place of the issue's comments.
func judge(t testing.TB, srv *fakeforge.Server, n int64) {
	t.Helper()
	srv.Change(n, func(is *issues.Issue) {
		is.ContentVersion = 0 // as opened: Gitea's first version
		is.UpdatedAt = time.Now()
	})
	is := srv.Issue(n)
	in := guard.Input{Config: config.Default(), Issue: is, Event: issues.Event{Name: "issues", Action: "opened", Number: n},
		Self: issues.ActionsUser, Repo: "acme/app", Now: time.Now().UTC()}
	p := guard.Decide(in)
	if len(p.Violations) > 0 || p.Ledger == nil {
		t.Fatalf("the guard fails issue #%d: %v", n, p.Violations)
	}
	unjudge(srv, n)
	l := *p.Ledger
	l.Written = time.Now().Unix()
	status := issues.StatusMarker(n) + "\n## ✅ gns-guard: all clear\n" + ledger.Encode(l, nil) + "\n"
	srv.AddComment(n, issues.Comment{ID: 900 + n, Author: issues.ActionsUser, Body: status, UpdatedAt: time.Now()})
}

// unjudge takes every comment off issue n: the guard never judged it.
func unjudge(srv *fakeforge.Server, n int64) {
	for _, c := range srv.Comments(n) {
		srv.RemoveComment(c.ID)
	}
}

// body is a governed issue's body whose budget has remaining tokens left
// of total, with invocation last reported.
func body(n, total, remaining int64) string {
	data, err := os.ReadFile(filepath.Join("..", "..", "examples", "issues", "healthy.md"))
	if err != nil {
		panic(err)
	}
	s := string(data)
	s = strings.Replace(s, "issue: 42", fmt.Sprintf("issue: %d", n), 1)
	s = strings.Replace(s, "total: 20000", fmt.Sprintf("total: %d", total), 1)
	s = strings.Replace(s, "consumed: 6200", fmt.Sprintf("consumed: %d", total-remaining), 1)
	s = strings.Replace(s, "remaining: 13800", fmt.Sprintf("remaining: %d", remaining), 1)
	return s
}

// rig is a meter in front of the stand-in, with a fake Gitea.
type rig struct {
	t     testing.TB
	gitea *fakeforge.Server
	prov  *standin.Provider
	store *meterstore.Store
	key   receipt.Key
	m     *Meter
	srv   *httptest.Server
	log   *syncWriter
}

const agentToken1 = "gitea-token-of-coder"

// newRig is a meter on a fake Gitea where coder writes and reader reads;
// opts change the meter's options before it starts.
func newRig(t testing.TB, opts ...func(*Options)) *rig {
	t.Helper()
	r := &rig{t: t, prov: standin.Start(t)}
	r.log = &syncWriter{b: &strings.Builder{}, before: r.quiet}
	r.gitea = fakeforge.New("acme/app")
	r.gitea.Token(agentToken1, "coder")
	r.gitea.Token("reader-token", "reader")
	r.gitea.Grant("coder", "write")
	r.gitea.Grant("reader", "read")
	r.gitea.AddIssue(issues.Issue{Number: 7, Body: body(7, 20000, 13800), Labels: []issues.Label{{ID: 1, Name: "cascade::depth-2"}, {ID: 2, Name: "size::medium"}}}, "alice")
	store, err := meterstore.Open(context.Background(), filepath.Join(t.TempDir(), "meter.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	r.store = store
	judge(t, r.gitea, 7)
	r.key, _ = receipt.NewKey([]byte(strings.Repeat("s", 40)))
	o := Options{Server: "http://gitea.invalid", Store: store, Key: r.key, Connect: func(_, token, _, _ string) (Client, error) { return r.gitea.Dial(token), nil }, Log: r.log,
		Upstream: map[metering.Provider]string{metering.OpenAI: r.prov.URL, metering.Anthropic: r.prov.URL},
		Keys:     map[metering.Provider]string{metering.OpenAI: standin.OpenAIKey, metering.Anthropic: standin.AnthropicKey}}
	for _, f := range opts {
		f(&o)
	}
	r.m, err = New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.quiet) // after the server closes, before the store does
	r.srv = httptest.NewServer(r.m.Handler())
	t.Cleanup(r.srv.Close)
	return r
}

// quiet waits until every call answered is settled and logged: the meter
// does both after the answer, off the client's path.
func (r *rig) quiet() {
	if r.m != nil {
		r.m.answered.wait(context.Background(), func(*exchange) bool { return true }, true)
	}
}

// calls are issue 7's calls in the store, once every call answered is settled.
func (r *rig) calls() ([]meterstore.Call, error) {
	r.quiet()
	return r.store.Calls(context.Background(), issue7)
}

// base is the base URL an agent's SDK is given for issue n: OpenAI's
// clients take it up to /v1, Anthropic's before it.
func (r *rig) base(n int64, provider string) string {
	u := fmt.Sprintf("%s/acme/app/issues/%d/invocations/inv-1/%s", r.srv.URL, n, provider)
	if provider == "openai" {
		u += "/v1"
	}
	return u
}

// syncWriter is the meter's log; before, when set, runs before it is read.
type syncWriter struct {
	mu     sync.Mutex
	b      *strings.Builder
	before func()
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncWriter) String() string {
	if w.before != nil {
		w.before()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// issue7 is the rig's issue as the store keys it: by the repository's id
// on the fake Gitea.
var issue7 = meterstore.Issue{Repo: repository{id: 1}.key(), Number: 7}
