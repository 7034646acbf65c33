package forge_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"code.gitea.io/sdk/gitea"

	"github.com/gns-guard/gns-guard/internal/forge"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

func TestMain(m *testing.M) { giteatest.Main(m) }

// fixture is a fresh repository on the shared real Gitea, with an adapter
// holding the admin token and an SDK client for setting things up.
type fixture struct {
	srv         *giteatest.Server
	owner, repo string
	fc          *forge.Client
	sdk         *gitea.Client
}

// newFixture starts a parallel test on a repository of its own.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	t.Parallel()
	srv := giteatest.Require(t)
	owner, repo := srv.NewRepo(t)
	fc, err := forge.New(srv.URL, srv.AdminToken, owner, repo)
	if err != nil {
		t.Fatal(err)
	}
	sdk, err := gitea.NewClient(srv.URL, gitea.SetToken(srv.AdminToken), gitea.SetGiteaVersion(""))
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{srv: srv, owner: owner, repo: repo, fc: fc, sdk: sdk}
}

// unreachable reports whether err comes from a request that got no answer
// from the server.
func unreachable(err error) bool {
	var u *forge.UnreachableError
	return errors.As(err, &u)
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func (f *fixture) newIssue(t *testing.T, title, body string) int64 {
	t.Helper()
	is, _, err := f.sdk.CreateIssue(f.owner, f.repo, gitea.CreateIssueOption{Title: title, Body: body})
	if err != nil {
		t.Fatalf("creating issue: %v\n%s", err, f.srv.LogTail())
	}
	return is.Index
}

// rawAPI sends a JSON request with the admin token, for setup the SDK lacks.
func (f *fixture) rawAPI(t *testing.T, method, path string, in, out any) {
	t.Helper()
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, f.srv.URL+"/api/v1"+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "token "+f.srv.AdminToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		t.Fatalf("%s %s: HTTP %d: %s", method, path, resp.StatusCode, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
	}
}

// delta runs fn and returns how many requests the adapter sent meanwhile.
func delta(fc *forge.Client, fn func()) int64 {
	before := fc.Requests()
	fn()
	return fc.Requests() - before
}

func TestNewBaseURL(t *testing.T) {
	for _, in := range []string{"http://127.0.0.1:3000", "http://127.0.0.1:3000/", "http://127.0.0.1:3000/api/v1", "http://127.0.0.1:3000/api/v1/"} {
		c, err := forge.New(in, "tok", "o", "r")
		if err != nil {
			t.Fatalf("New(%q): %v", in, err)
		}
		if c.BaseURL() != "http://127.0.0.1:3000" {
			t.Errorf("New(%q).BaseURL() = %q", in, c.BaseURL())
		}
		if c.Requests() != 0 {
			t.Errorf("New(%q) sent %d requests, want 0", in, c.Requests())
		}
	}
	if c, err := forge.New("https://git.example.com/gitea/api/v1", "tok", "o", "r"); err != nil || c.BaseURL() != "https://git.example.com/gitea" {
		t.Errorf("sub-path: %v %v", c, err)
	}
	for _, bad := range []string{"", "127.0.0.1:3000", "ftp://x", "http://u:p@host"} {
		if _, err := forge.New(bad, "tok", "o", "r"); err == nil {
			t.Errorf("New(%q) accepted", bad)
		}
	}
	if _, err := forge.New("http://h", "tok", "", "r"); err == nil {
		t.Error("empty owner accepted")
	}
}

func TestUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	c, err := forge.New("http://"+addr, "secret-token-value", "o", "r", forge.WithTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	_, errSelf := c.Self(ctx)                                                    // through the SDK
	_, errIssue := c.Issue(ctx, 1)                                               // direct request
	_, errPage := c.RecentComments(ctx, issues.Issue{Number: 1, Comments: 3}, 2) // timeline
	for _, err := range []error{errSelf, errIssue, errPage} {
		if !unreachable(err) {
			t.Errorf("want an unreachable error, got %T %v", err, err)
			continue
		}
		if !strings.HasPrefix(err.Error(), "could not reach http://"+addr) || strings.Contains(err.Error(), "secret-token-value") {
			t.Errorf("message: %v", err)
		}
	}
	if c.Requests() != 3 {
		t.Errorf("Requests() = %d, want 3", c.Requests())
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.Issue(cancelled, 1); unreachable(err) || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// A proxy in front of Gitea answers with its own pages, not Gitea's JSON:
// the error still says what the proxy said, on one line, through the SDK
// and through direct requests alike.
func TestProxyErrorPages(t *testing.T) {
	page := "<html>\n<head><title>502 Bad Gateway</title></head>\n<body>\n" + strings.Repeat("<p>padding</p>\n", 200) + "</body>\n</html>\n"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/issues/1") {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusBadGateway)
			io.WriteString(w, page)
			return
		}
		http.Error(w, "upstream Gitea is restarting", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	c, err := forge.New(srv.URL, "secret-token-value", "o", "r")
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	_, errSelf := c.Self(ctx)                         // through the SDK
	_, errComment := c.CreateComment(ctx, 1, "hello") // through the SDK
	_, errIssue := c.Issue(ctx, 1)                    // direct request
	for _, tc := range []struct {
		err  error
		want string
	}{
		{errSelf, "GET /api/v1/user: HTTP 503 Service Unavailable: upstream Gitea is restarting"},
		{errComment, "POST /api/v1/repos/o/r/issues/1/comments: HTTP 503 Service Unavailable: upstream Gitea is restarting"},
		{errIssue, "GET /api/v1/repos/o/r/issues/1: HTTP 502 Bad Gateway: <html> <head><title>502 Bad Gateway</title></head> <body> <p>padding</p>"},
	} {
		msg := fmt.Sprint(tc.err)
		if !strings.HasPrefix(msg, tc.want) || strings.Contains(msg, "\n") || len(msg) > 500 || strings.Contains(msg, "secret-token-value") {
			t.Errorf("error:\n got %q\nwant a single line starting %q", msg, tc.want)
		}
		var he *forge.HTTPError
		if !errors.As(tc.err, &he) || he.Status/100 != 5 {
			t.Errorf("%v: want an *forge.HTTPError with a 5xx status", tc.err)
		}
	}
}

func TestIssueAndEditBody(t *testing.T) {
	f := newFixture(t)
	ctx := ctxT(t)
	n := f.newIssue(t, "state", "first body")

	var is issues.Issue
	if d := delta(f.fc, func() {
		var err error
		if is, err = f.fc.Issue(ctx, n); err != nil {
			t.Fatal(err)
		}
	}); d != 1 {
		t.Errorf("Issue made %d requests, want 1", d)
	}
	if is.Number != n || is.Title != "state" || is.Body != "first body" || is.State != "open" || is.Locked || is.IsPull ||
		is.Comments != 0 || is.UpdatedAt.IsZero() || len(is.Labels) != 0 {
		t.Errorf("Issue = %+v", is)
	}
	v0 := is.ContentVersion

	var v1 int
	if d := delta(f.fc, func() {
		var err error
		if v1, err = f.fc.EditBody(ctx, n, "second body", v0); err != nil {
			t.Fatalf("fresh EditBody: %v", err)
		}
	}); d != 1 {
		t.Errorf("EditBody made %d requests, want 1", d)
	}
	if v1 <= v0 {
		t.Errorf("version %d after edit, was %d", v1, v0)
	}
	_, err := f.fc.EditBody(ctx, n, "lost update", v0)
	if !errors.Is(err, issues.ErrConflict) {
		t.Fatalf("stale EditBody: %v, want ErrConflict", err)
	}
	var he *forge.HTTPError
	if !errors.As(err, &he) || he.Status != http.StatusConflict || he.Method != http.MethodPatch ||
		he.Path != fmt.Sprintf("/api/v1/repos/%s/%s/issues/%d", f.owner, f.repo, n) {
		t.Errorf("conflict error: %#v", he)
	}
	if strings.Contains(err.Error(), f.srv.AdminToken) {
		t.Error("error message carries the token")
	}
	is, err = f.fc.Issue(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	if is.Body != "second body" || is.ContentVersion != v1 {
		t.Errorf("after edits: body %q version %d, want %q %d", is.Body, is.ContentVersion, "second body", v1)
	}
	if _, err := f.fc.EditBody(ctx, n, "third body", v1); err != nil {
		t.Errorf("EditBody with the version it returned: %v", err)
	}

	if _, err := f.fc.Issue(ctx, 999999); !errors.Is(err, issues.ErrNotFound) {
		t.Errorf("missing issue: %v, want ErrNotFound", err)
	}
	if _, err := f.fc.EditBody(ctx, 999999, "x", 0); !errors.Is(err, issues.ErrNotFound) {
		t.Errorf("EditBody on a missing issue: %v, want ErrNotFound", err)
	}
}

func TestComments(t *testing.T) {
	f := newFixture(t)
	ctx := ctxT(t)
	n := f.newIssue(t, "comments", "")

	c1, err := f.fc.CreateComment(ctx, n, "hello")
	if err != nil {
		t.Fatal(err)
	}
	if c1.ID == 0 || c1.Author != f.srv.AdminLogin || c1.Body != "hello" || c1.CreatedAt.IsZero() || !strings.Contains(c1.HTMLURL, fmt.Sprintf("/issues/%d#issuecomment-%d", n, c1.ID)) {
		t.Errorf("CreateComment = %+v", c1)
	}
	c2, err := f.fc.CreateComment(ctx, n, "world")
	if err != nil {
		t.Fatal(err)
	}
	e1, err := f.fc.EditComment(ctx, c1.ID, "hello, edited")
	if err != nil {
		t.Fatal(err)
	}
	if e1.ID != c1.ID || e1.Body != "hello, edited" {
		t.Errorf("EditComment = %+v", e1)
	}
	if err := f.fc.DeleteComment(ctx, c2.ID); err != nil {
		t.Fatal(err)
	}
	is, err := f.fc.Issue(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	if is.Comments != 1 {
		t.Errorf("Comments = %d after create, create, delete; want 1", is.Comments)
	}
	page, err := f.fc.RecentComments(ctx, is, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Comments) != 1 || page.Comments[0].ID != c1.ID || page.Comments[0].Body != "hello, edited" || page.Start != 0 {
		t.Errorf("RecentComments = %+v", page)
	}
	if _, err := f.fc.EditComment(ctx, c2.ID, "gone"); !errors.Is(err, issues.ErrNotFound) {
		t.Errorf("EditComment of a deleted comment: %v, want ErrNotFound", err)
	}
	if err := f.fc.DeleteComment(ctx, c2.ID); !errors.Is(err, issues.ErrNotFound) {
		t.Errorf("DeleteComment of a deleted comment: %v, want ErrNotFound", err)
	}
	// Gitea 1.26 answers 500 ("issue does not exist") here, not 404.
	var he *forge.HTTPError
	if _, err := f.fc.CreateComment(ctx, 999999, "x"); !errors.As(err, &he) || (he.Status != http.StatusInternalServerError && he.Status != http.StatusNotFound) {
		t.Errorf("CreateComment on a missing issue: %v, want an HTTP error", err)
	}
}

func TestLabels(t *testing.T) {
	f := newFixture(t)
	ctx := ctxT(t)
	n := f.newIssue(t, "labels", "")

	// 60 labels already in the repository: the lookup must read both pages.
	var wg sync.WaitGroup
	errs := make(chan error, 60)
	for i := range 60 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, err := f.sdk.CreateLabel(f.owner, f.repo, gitea.CreateLabelOption{Name: fmt.Sprintf("existing-%02d", i), Color: "#00aa00"})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	countLabels := func() map[string]int {
		t.Helper()
		m := map[string]int{}
		for page := 1; ; page++ {
			ls, _, err := f.sdk.ListRepoLabels(f.owner, f.repo, gitea.ListLabelsOptions{ListOptions: gitea.ListOptions{Page: page, PageSize: 50}})
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range ls {
				m[l.Name]++
			}
			if len(ls) < 50 {
				return m
			}
		}
	}
	before := countLabels()

	names := []string{"existing-00", "existing-59", "guard/blocked", "guard/plain", "guard/blocked"}
	specs := []issues.LabelSpec{{Name: "guard/blocked", Color: "d73a4a", Description: "blocked by gns-guard"}}
	if err := f.fc.AddLabels(ctx, n, names, specs); err != nil {
		t.Fatal(err)
	}
	is, err := f.fc.Issue(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	got := is.LabelNames()
	sort.Strings(got)
	if want := []string{"existing-00", "existing-59", "guard/blocked", "guard/plain"}; !slices.Equal(got, want) {
		t.Fatalf("labels %v, want %v", got, want)
	}
	for _, l := range is.Labels {
		if l.ID == 0 {
			t.Errorf("label %q without id", l.Name)
		}
	}
	after := countLabels()
	if len(after) != len(before)+2 || after["existing-59"] != 1 || after["guard/blocked"] != 1 || after["guard/plain"] != 1 {
		t.Errorf("repository labels: %d before, %d after: %v", len(before), len(after), after)
	}
	all, _, err := f.sdk.ListRepoLabels(f.owner, f.repo, gitea.ListLabelsOptions{ListOptions: gitea.ListOptions{Page: 2, PageSize: 50}})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range all {
		switch l.Name {
		case "guard/blocked":
			if !strings.EqualFold(strings.TrimPrefix(l.Color, "#"), "d73a4a") || l.Description != "blocked by gns-guard" {
				t.Errorf("guard/blocked created as %+v", l)
			}
		case "guard/plain":
			if !strings.EqualFold(strings.TrimPrefix(l.Color, "#"), forge.DefaultLabelColor) {
				t.Errorf("guard/plain created as %+v", l)
			}
		}
	}

	// Attaching again creates nothing and changes nothing.
	if err := f.fc.AddLabels(ctx, n, []string{"guard/blocked"}, specs); err != nil {
		t.Fatal(err)
	}
	if again := countLabels(); len(again) != len(after) || again["guard/blocked"] != 1 {
		t.Errorf("second AddLabels created labels: %v", again)
	}

	var blocked issues.Label
	for _, l := range is.Labels {
		if l.Name == "guard/blocked" {
			blocked = l
		}
	}
	if err := f.fc.RemoveLabel(ctx, n, blocked); err != nil {
		t.Fatal(err)
	}
	if err := f.fc.RemoveLabel(ctx, n, issues.Label{Name: "existing-59"}); err != nil { // by name
		t.Fatal(err)
	}
	is, err = f.fc.Issue(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	got = is.LabelNames()
	sort.Strings(got)
	if want := []string{"existing-00", "guard/plain"}; !slices.Equal(got, want) {
		t.Errorf("labels after removal %v, want %v", got, want)
	}
	if err := f.fc.RemoveLabel(ctx, n, issues.Label{Name: "no-such-label"}); !errors.Is(err, issues.ErrNotFound) {
		t.Errorf("removing an unknown label: %v, want ErrNotFound", err)
	}
	if err := f.fc.AddLabels(ctx, 999999, []string{"guard/plain"}, nil); !errors.Is(err, issues.ErrNotFound) {
		t.Errorf("AddLabels on a missing issue: %v, want ErrNotFound", err)
	}
}

func TestLockAndSelf(t *testing.T) {
	f := newFixture(t)
	ctx := ctxT(t)
	n := f.newIssue(t, "lock", "")

	login := fmt.Sprintf("writer-%d", time.Now().UnixNano()%1e9)
	token, err := f.srv.NewUser(ctx, login, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.srv.AddCollaborator(ctx, f.owner, f.repo, login, giteatest.PermWrite); err != nil {
		t.Fatal(err)
	}
	writer, err := forge.New(f.srv.URL+"/api/v1", token, f.owner, f.repo)
	if err != nil {
		t.Fatal(err)
	}

	if who, err := writer.Self(ctx); err != nil || who != login {
		t.Errorf("writer Self = %q, %v; want %q", who, err, login)
	}
	if who, err := f.fc.Self(ctx); err != nil || who != f.srv.AdminLogin {
		t.Errorf("admin Self = %q, %v; want %q", who, err, f.srv.AdminLogin)
	}

	// A write collaborator can comment, label and edit, but not lock.
	if _, err := writer.CreateComment(ctx, n, "from the writer"); err != nil {
		t.Fatalf("writer CreateComment: %v", err)
	}
	err = writer.Lock(ctx, n, "Resolved")
	if !errors.Is(err, issues.ErrForbidden) {
		t.Fatalf("writer Lock: %v, want ErrForbidden", err)
	}
	if !strings.Contains(err.Error(), "PUT /api/v1/repos/") || strings.Contains(err.Error(), token) {
		t.Errorf("forbidden message: %v", err)
	}
	if is, _ := f.fc.Issue(ctx, n); is.Locked {
		t.Fatal("locked by a forbidden request")
	}

	if d := delta(f.fc, func() {
		if err := f.fc.Lock(ctx, n, "Resolved"); err != nil {
			t.Fatalf("admin Lock: %v", err)
		}
	}); d != 1 {
		t.Errorf("Lock made %d requests, want 1", d)
	}
	is, err := f.fc.Issue(ctx, n)
	if err != nil {
		t.Fatal(err)
	}
	if !is.Locked {
		t.Error("not locked after Lock")
	}
	if err := f.fc.Lock(ctx, n, "Resolved"); err != nil {
		t.Errorf("Lock of a locked issue: %v", err)
	}
	if err := f.fc.Lock(ctx, 999999, ""); !errors.Is(err, issues.ErrNotFound) {
		t.Errorf("Lock of a missing issue: %v, want ErrNotFound", err)
	}

	// A token from a user without access to a private repository.
	stranger, err := forge.New(f.srv.URL, "0000000000000000000000000000000000000000", f.owner, f.repo)
	if err != nil {
		t.Fatal(err)
	}
	var he *forge.HTTPError
	if _, err := stranger.Self(ctx); !errors.As(err, &he) || he.Status != http.StatusUnauthorized || errors.Is(err, issues.ErrForbidden) {
		t.Errorf("bad token Self: %v, want HTTP 401 HTTPError", err)
	}
}

func TestPullFiles(t *testing.T) {
	f := newFixture(t)
	ctx := ctxT(t)

	var readme struct {
		SHA string `json:"sha"`
	}
	f.rawAPI(t, http.MethodGet, fmt.Sprintf("/repos/%s/%s/contents/README.md?ref=main", f.owner, f.repo), nil, &readme)
	type op struct {
		Operation string `json:"operation"`
		Path      string `json:"path"`
		FromPath  string `json:"from_path,omitempty"`
		SHA       string `json:"sha,omitempty"`
		Content   string `json:"content,omitempty"`
	}
	var ops []op
	var want []string
	for i := range 60 {
		p := fmt.Sprintf("src/file%02d.go", i)
		ops = append(ops, op{Operation: "create", Path: p, Content: base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf("package src // %d\n", i)))})
		want = append(want, p)
	}
	ops = append(ops, op{Operation: "update", FromPath: "README.md", Path: "docs/README.md", SHA: readme.SHA,
		Content: base64.StdEncoding.EncodeToString([]byte("# moved\n"))})
	want = append(want, "README.md", "docs/README.md")
	f.rawAPI(t, http.MethodPost, fmt.Sprintf("/repos/%s/%s/contents", f.owner, f.repo), map[string]any{
		"branch": "main", "new_branch": "feature", "message": "many files", "files": ops,
	}, nil)
	pr, _, err := f.sdk.CreatePullRequest(f.owner, f.repo, gitea.CreatePullRequestOption{Head: "feature", Base: "main", Title: "many files"})
	if err != nil {
		t.Fatal(err)
	}

	var got []string
	if d := delta(f.fc, func() {
		if got, err = f.fc.PullFiles(ctx, pr.Index); err != nil {
			t.Fatal(err)
		}
	}); d != 2 {
		t.Errorf("PullFiles of 61 files made %d requests, want 2", d)
	}
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("PullFiles = %v\nwant %v", got, want)
	}

	is, err := f.fc.Issue(ctx, pr.Index)
	if err != nil {
		t.Fatal(err)
	}
	if !is.IsPull || is.Title != "many files" {
		t.Errorf("Issue of a pull request = %+v", is)
	}
	// The pull request path of RecentComments reads up to an empty page.
	var ids []int64
	for i := range 3 {
		c, err := f.fc.CreateComment(ctx, pr.Index, fmt.Sprintf("pr comment %d", i))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
	}
	if is, err = f.fc.Issue(ctx, pr.Index); err != nil {
		t.Fatal(err)
	}
	page, err := f.fc.RecentComments(ctx, is, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got := commentIDs(page.Comments); !slices.Equal(got, ids) {
		t.Errorf("pull request RecentComments = %v, want %v", got, ids)
	}
	if _, err := f.fc.PullFiles(ctx, 999999); !errors.Is(err, issues.ErrNotFound) {
		t.Errorf("PullFiles of a missing pull request: %v, want ErrNotFound", err)
	}

	// PullFile reads a file as the pull request's head holds it, never the
	// default branch's copy; a file it lacks is not found.
	if d := delta(f.fc, func() {
		if got, err := f.fc.PullFile(ctx, pr.Index, "docs/README.md", 1<<10); err != nil || string(got) != "# moved\n" {
			t.Errorf("PullFile of the moved README: %q, %v", got, err)
		}
	}); d != 2 {
		t.Errorf("PullFile made %d requests, want 2 (the head, the file)", d)
	}
	if _, err := f.fc.PullFile(ctx, pr.Index, "README.md", 1<<10); !errors.Is(err, issues.ErrNotFound) {
		t.Errorf("PullFile of the README the pull request moved away: %v, want ErrNotFound (main still has it)", err)
	}
	if _, err := f.fc.PullFile(ctx, pr.Index, "src/file07.go", 5); !errors.Is(err, issues.ErrTooLarge) {
		t.Errorf("PullFile over max: %v, want ErrTooLarge", err)
	}
}

func commentIDs(cs []issues.Comment) []int64 {
	ids := make([]int64, len(cs))
	for i, c := range cs {
		ids[i] = c.ID
	}
	return ids
}

// created is a comment as the create call answered it.
type created struct {
	id   int64
	body string
	at   time.Time
}

// addComments posts count comments with 8 concurrent requests and returns
// them in timeline order (created second, then id: Gitea's order).
func (f *fixture) addComments(t *testing.T, number int64, count int, prefix string) []created {
	t.Helper()
	const workers = 8
	jobs := make(chan int)
	out := make([]created, count)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				body := fmt.Sprintf("%s %04d", prefix, i)
				var c *gitea.Comment
				var err error
				for try := 0; try < 5; try++ { // SQLite may report busy under load
					c, _, err = f.sdk.CreateIssueComment(f.owner, f.repo, number, gitea.CreateIssueCommentOption{Body: body})
					if err == nil {
						break
					}
					time.Sleep(time.Duration(try+1) * 100 * time.Millisecond)
				}
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					continue
				}
				out[i] = created{id: c.ID, body: body, at: c.Created}
			}
		}()
	}
	for i := range count {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	if firstErr != nil {
		t.Fatalf("creating comments: %v\n%s", firstErr, f.srv.LogTail())
	}
	sortTimeline(out)
	return out
}

func sortTimeline(cs []created) {
	sort.Slice(cs, func(i, j int) bool {
		if !cs[i].at.Equal(cs[j].at) {
			return cs[i].at.Before(cs[j].at)
		}
		return cs[i].id < cs[j].id
	})
}

// checkTail asserts that got is a run of want ending at its end, holding
// at least the last n.
func checkTail(t *testing.T, got []issues.Comment, want []created, n int) {
	t.Helper()
	if len(got) < min(n, len(want)) || len(got) > len(want) {
		t.Fatalf("%d comments, want at least %d of %d", len(got), min(n, len(want)), len(want))
	}
	tail := want[len(want)-len(got):]
	for i := range got {
		if (tail[i].id != 0 && got[i].ID != tail[i].id) || got[i].Body != tail[i].body {
			t.Fatalf("comment %d of %d: got #%d %q, want #%d %q", i, len(got), got[i].ID, got[i].Body, tail[i].id, tail[i].body)
		}
	}
}

func TestRecentComments(t *testing.T) {
	f := newFixture(t)
	ctx := ctxT(t)

	// 60 comments posted through the API, 8 at a time.
	small := f.newIssue(t, "60 comments", "")
	began := time.Now()
	smallWant := f.addComments(t, small, 60, "small")
	t.Logf("posted 60 comments through the API in %s", time.Since(began).Round(time.Millisecond))

	// 2,000 comments restored in one batch (the API would take minutes).
	bodies := make([]string, 2000)
	largeWant := make([]created, len(bodies))
	for i := range bodies {
		bodies[i] = fmt.Sprintf("large %04d", i)
		largeWant[i] = created{body: bodies[i]} // ids unknown: checked by body
	}
	began = time.Now()
	owner, repo, large := f.srv.SeedIssue(t, "2000 comments", "", bodies)
	t.Logf("seeded 2,000 comments in %s", time.Since(began).Round(time.Millisecond))
	lc, err := forge.New(f.srv.URL, f.srv.AdminToken, owner, repo)
	if err != nil {
		t.Fatal(err)
	}

	smallIs, err := f.fc.Issue(ctx, small)
	if err != nil {
		t.Fatal(err)
	}
	largeIs, err := lc.Issue(ctx, large)
	if err != nil {
		t.Fatal(err)
	}
	if smallIs.Comments != 60 || largeIs.Comments != 2000 {
		t.Fatalf("comment counts %d and %d", smallIs.Comments, largeIs.Comments)
	}

	read := func(c *forge.Client, is issues.Issue, n int) (issues.CommentPage, int64) {
		t.Helper()
		var page issues.CommentPage
		d := delta(c, func() {
			var err error
			if page, err = c.RecentComments(ctx, is, n); err != nil {
				t.Fatal(err)
			}
		})
		return page, d
	}
	for _, n := range []int{0, 1, 10, 20, 49, 50, 51, 120} {
		sp, sd := read(f.fc, smallIs, n)
		lp, ld := read(lc, largeIs, n)
		t.Logf("n=%d: 60 comments: %d requests, %d comments from offset %d; 2,000 comments: %d requests, %d comments from offset %d",
			n, sd, len(sp.Comments), sp.Start, ld, len(lp.Comments), lp.Start)
		checkTail(t, sp.Comments, smallWant, n)
		checkTail(t, lp.Comments, largeWant, n)
		// n ≤ 50 spans at most one full page and the end; each further 50
		// comments asked for add one page.
		limit := int64(2 + max(n-1, 0)/50)
		if sd > limit || ld > limit {
			t.Errorf("n=%d: %d and %d requests, want at most %d", n, sd, ld, limit)
		}
		if wantStart := (max(2000-n, 0) / 50) * 50; lp.Start != wantStart {
			t.Errorf("n=%d: Start %d, want %d", n, lp.Start, wantStart)
		}
		if sp.Start == 0 && len(sp.Comments) != 60 {
			t.Errorf("n=%d: Start 0 but %d comments", n, len(sp.Comments))
		}
	}
	// The request count does not depend on the comment count.
	_, sd := read(f.fc, smallIs, 20)
	_, ld := read(lc, largeIs, 20)
	if sd != ld || sd > 2 {
		t.Errorf("n=20: %d requests with 60 comments, %d with 2,000; want the same, at most 2", sd, ld)
	}

	// Walking back with CommentsBefore recovers the whole history in order.
	page, _ := read(lc, largeIs, 10)
	all := page.Comments
	for start := page.Start; start > 0; {
		var prev issues.CommentPage
		if d := delta(lc, func() {
			var err error
			if prev, err = lc.CommentsBefore(ctx, large, start); err != nil {
				t.Fatal(err)
			}
		}); d != 1 {
			t.Fatalf("CommentsBefore made %d requests, want 1", d)
		}
		if prev.Start != start-50 || len(prev.Comments) != 50 {
			t.Fatalf("CommentsBefore(%d): Start %d, %d comments", start, prev.Start, len(prev.Comments))
		}
		all = append(prev.Comments, all...)
		start = prev.Start
	}
	checkTail(t, all, largeWant, 2000)
	for i := range all {
		largeWant[i].id = all[i].ID // now known: later checks compare ids too
	}
	if p, err := lc.CommentsBefore(ctx, large, 0); err != nil || len(p.Comments) != 0 || p.Start != 0 {
		t.Errorf("CommentsBefore(0) = %+v, %v", p, err)
	}
	if p, err := lc.CommentsBefore(ctx, large, 1960); err != nil || p.Start != 1950 || len(p.Comments) != 50 || p.Comments[0].ID != largeWant[1950].id {
		t.Errorf("CommentsBefore(1960) (rounded up to 2000) = Start %d, %d comments, %v", p.Start, len(p.Comments), err)
	}

	// About 60 label events interleaved with 15 comments after the 2,000.
	if err := lc.AddLabels(ctx, large, []string{"tick"}, nil); err != nil {
		t.Fatal(err)
	}
	is, err := lc.Issue(ctx, large)
	if err != nil {
		t.Fatal(err)
	}
	tick := is.Labels[0]
	events := 1
	for i := 0; events < 60; i++ {
		if err := lc.RemoveLabel(ctx, large, tick); err != nil {
			t.Fatal(err)
		}
		if err := lc.AddLabels(ctx, large, []string{"tick"}, nil); err != nil {
			t.Fatal(err)
		}
		events += 2
		if i%2 == 0 {
			c, err := lc.CreateComment(ctx, large, fmt.Sprintf("late %02d", i))
			if err != nil {
				t.Fatal(err)
			}
			largeWant = append(largeWant, created{id: c.ID, body: c.Body, at: c.CreatedAt})
		}
	}
	if is, err = lc.Issue(ctx, large); err != nil {
		t.Fatal(err)
	}
	if is.Comments != len(largeWant) {
		t.Fatalf("comment count %d, want %d", is.Comments, len(largeWant))
	}
	for _, n := range []int{5, 20, 50} {
		p, d := read(lc, is, n)
		checkTail(t, p.Comments, largeWant, n)
		t.Logf("with %d label events among the last comments: n=%d: %d requests, %d comments from offset %d", events, n, d, len(p.Comments), p.Start)
		if d > 4 {
			t.Errorf("n=%d: %d requests with %d events at the end", n, d, events)
		}
	}
}
