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

	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/metering"
	"github.com/gns-guard/gns-guard/internal/meterstore"
	"github.com/gns-guard/gns-guard/internal/receipt"
	"github.com/gns-guard/gns-guard/internal/testkit/standin"
)

// fakeGitea is a Gitea that knows tokens, permissions and one issue per
// number (unit tests fake Gitea; the real one is in meter_gitea_test.go).
type fakeGitea struct {
	issues.Forge
	mu       sync.Mutex
	tokens   map[string]string // token → login
	perm     map[string]string // login → permission
	issues   map[int64]issues.Issue
	comments map[int64][]issues.Comment
	file     []byte
	requests int
}

// client is the fake as seen with one token.
type fakeClient struct {
	*fakeGitea
	token string
}

func (f *fakeGitea) connect(_, token, _, _ string) (Client, error) {
	return &fakeClient{fakeGitea: f, token: token}, nil
}

func (c *fakeClient) count() { c.mu.Lock(); c.requests++; c.mu.Unlock() }

func (c *fakeClient) Self(context.Context) (string, error) {
	c.count()
	if l, ok := c.tokens[c.token]; ok {
		return l, nil
	}
	return "", fmt.Errorf("GET /user: %w", issues.ErrUnauthorized)
}

func (c *fakeClient) Permission(_ context.Context, user string) (string, error) {
	c.count()
	return c.perm[user], nil
}

func (c *fakeClient) Issue(_ context.Context, n int64) (issues.Issue, error) {
	c.count()
	c.mu.Lock()
	defer c.mu.Unlock()
	is, ok := c.issues[n]
	if !ok {
		return is, fmt.Errorf("GET issue: %w", issues.ErrNotFound)
	}
	return is, nil
}

func (c *fakeClient) RecentComments(_ context.Context, is issues.Issue, _ int) (issues.CommentPage, error) {
	c.count()
	c.mu.Lock()
	defer c.mu.Unlock()
	return issues.CommentPage{Comments: append([]issues.Comment(nil), c.comments[is.Number]...)}, nil
}

// judge runs the guard on issue n as its run on "opened" would, and posts
// its status comment with the ledger.
func (f *fakeGitea) judge(t testing.TB, n int64) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	is := f.issues[n]
	is.ContentVersion = 0 // as opened: Gitea's first version
	is.UpdatedAt = time.Now()
	f.issues[n] = is
	in := guard.Input{Config: issues.DefaultConfig(), Issue: is, Event: issues.Event{Name: "issues", Action: "opened", Number: n},
		Self: issues.ActionsUser, Repo: "acme/app", Now: time.Now().UTC()}
	p := guard.Decide(in)
	if len(p.Violations) > 0 || p.Ledger == nil {
		t.Fatalf("the guard fails issue #%d: %v", n, p.Violations)
	}
	if f.comments == nil {
		f.comments = map[int64][]issues.Comment{}
	}
	l := *p.Ledger
	l.Written = time.Now().Unix()
	status := issues.StatusMarker(n) + "\n## ✅ gns-guard: all clear\n" + ledger.Encode(l, nil) + "\n"
	f.comments[n] = []issues.Comment{{ID: 900 + n, Author: issues.ActionsUser, Body: status, UpdatedAt: time.Now()}}
}

func (c *fakeClient) File(context.Context, string, int64) ([]byte, error) {
	c.count()
	if c.file == nil {
		return nil, fmt.Errorf("GET raw: %w", issues.ErrNotFound)
	}
	return c.file, nil
}

func (c *fakeClient) IsRepoAdmin(context.Context, string) (bool, error) { return false, nil }
func (c *fakeClient) ServerTime() time.Time                             { return time.Time{} }
func (c *fakeClient) Writers(context.Context) ([]string, error)         { return nil, nil }

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
	gitea *fakeGitea
	prov  *standin.Provider
	store *meterstore.Store
	key   receipt.Key
	m     *Meter
	srv   *httptest.Server
	log   *strings.Builder
}

const agentToken1 = "gitea-token-of-coder"

func newRig(t testing.TB) *rig {
	t.Helper()
	r := &rig{t: t, prov: standin.Start(t), log: &strings.Builder{}}
	r.gitea = &fakeGitea{tokens: map[string]string{agentToken1: "coder", "reader-token": "reader"}, perm: map[string]string{"coder": "write", "reader": "read"},
		issues: map[int64]issues.Issue{7: {Number: 7, Body: body(7, 20000, 13800), Labels: []issues.Label{{ID: 1, Name: "cascade::depth-2"}, {ID: 2, Name: "size::medium"}}}}}
	store, err := meterstore.Open(context.Background(), filepath.Join(t.TempDir(), "meter.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	r.store = store
	r.gitea.judge(t, 7)
	r.key, _ = receipt.NewKey([]byte(strings.Repeat("s", 40)))
	r.m, err = New(Options{Server: "http://gitea.invalid", Store: store, Key: r.key, Connect: r.gitea.connect, Log: &syncWriter{b: r.log},
		Upstream: map[metering.Provider]string{metering.OpenAI: r.prov.URL, metering.Anthropic: r.prov.URL},
		Keys:     map[metering.Provider]string{metering.OpenAI: standin.OpenAIKey, metering.Anthropic: standin.AnthropicKey}})
	if err != nil {
		t.Fatal(err)
	}
	r.srv = httptest.NewServer(r.m.Handler())
	t.Cleanup(r.srv.Close)
	return r
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

type syncWriter struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncWriter) String() string { w.mu.Lock(); defer w.mu.Unlock(); return w.b.String() }
