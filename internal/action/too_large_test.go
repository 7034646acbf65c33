package action_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// hugeText is n bytes of HTML-like text. Gitea escapes <, > and & in its
// JSON as \u003c, \u003e and \u0026: every byte of it takes six in an
// answer, so 6 MiB of it makes an answer over the guard's 32 MiB cap.
func hugeText(n int) string {
	return strings.Repeat("<&>", n/3+1)[:n]
}

// hugeAPI sends a request as the user and decodes the answer whole:
// actiontest's helpers read at most 8 MiB of an answer, and an answer that
// carries a huge text is longer.
func hugeAPI(t *testing.T, f *actiontest.Repo, as actiontest.User, method, path string, in, out any) {
	t.Helper()
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, f.S.URL+"/api/v1"+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "token "+as.Token)
	req.Header.Set("Content-Type", "application/json")
	c := &http.Client{Timeout: 2 * time.Minute}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode/100 != 2 {
		t.Fatalf("%s %s: HTTP %d: %.500s", method, path, resp.StatusCode, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
	}
}

// hugeIssue reads issue n whole.
func hugeIssue(t *testing.T, f *actiontest.Repo, n int64) actiontest.Issue {
	t.Helper()
	var is actiontest.Issue
	hugeAPI(t, f, f.Admin(), http.MethodGet, f.Path("/issues/%d", n), nil, &is)
	return is
}

// hugeStatus returns the guard's status comment on issue n, reading every
// comment whole.
func hugeStatus(t *testing.T, f *actiontest.Repo, n int64) actiontest.Comment {
	t.Helper()
	var cs []actiontest.Comment
	hugeAPI(t, f, f.Admin(), http.MethodGet, f.Path("/issues/%d/comments", n), nil, &cs)
	var out []actiontest.Comment
	for _, c := range cs {
		if c.User.Login == f.Bot && strings.Contains(c.Body, actiontest.StatusMarker(n)) {
			out = append(out, c)
		}
	}
	if len(out) != 1 {
		t.Fatalf("expected exactly one status comment on #%d, found %d", n, len(out))
	}
	return out[0]
}

// contentTooLarge returns the content-too-large findings of a run.
func contentTooLarge(t *testing.T, r actiontest.Result) []actiontest.Violation {
	t.Helper()
	var out []actiontest.Violation
	for _, v := range r.Violations(t) {
		if v.Rule == "content-too-large" {
			out = append(out, v)
		}
	}
	return out
}

// An agent that posts an 8 MiB comment does not switch the guard off: the
// run fails with content-too-large naming the comment and its author, sets
// permission::violation and writes its status comment, and so does every
// later run while the comment is there; the other comments are still read.
func TestHugeCommentIsAViolation(t *testing.T) {
	f := newFixture(t)
	agent := f.User(t, "agent", giteatest.PermWrite)
	n, d := f.Open(t, "huge comment", example(t, "healthy.md"), "cascade::depth-2", "size::medium")
	f.Run(t, d).Expect(t, 0, "pass")

	var posted actiontest.Comment
	hugeAPI(t, f, agent, http.MethodPost, f.Path("/issues/%d/comments", n), map[string]string{"body": hugeText(8 << 20)}, &posted)
	id := posted.ID
	d = f.Runs.Next(t, actiontest.From("issue_comment", "created", n, agent.Login))
	began := time.Now()
	r := f.Run(t, d)
	t.Logf("the run on the big comment: %d requests in %s", r.Requests, time.Since(began).Round(time.Millisecond))
	r.Expect(t, 1, "fail")
	vs := contentTooLarge(t, r)
	if len(vs) != 1 || !strings.Contains(vs[0].Message, "comment "+strconv.FormatInt(id, 10)) || !strings.Contains(vs[0].Message, agent.Login) ||
		!strings.Contains(vs[0].Message, "bytes long") || vs[0].KeyPath != "comment#"+strconv.FormatInt(id, 10) {
		t.Fatalf("expected one content-too-large finding naming comment %d by %s and its length, got %+v\n%s", id, agent.Login, vs, r.String())
	}
	if is := hugeIssue(t, f, n); !is.Has("permission::violation") {
		t.Errorf("permission::violation was not set: %v", is.LabelNames())
	}
	st := hugeStatus(t, f, n)
	if !strings.Contains(st.Body, "content-too-large") || !strings.Contains(st.Body, "<!-- gns-guard:ledger v") {
		t.Errorf("the status comment does not report content-too-large:\n%.3000s", st.Body)
	}

	// A later comment by another user: the run still reads the timeline,
	// the big comment included, and fails for it.
	_, d = f.Comment(t, n, f.Admin(), "a small comment after the big one")
	began = time.Now()
	r = f.Run(t, d)
	t.Logf("the next run: %d requests in %s", r.Requests, time.Since(began).Round(time.Millisecond))
	r.Expect(t, 1, "fail")
	if rs := r.Rules(t); !slices.Contains(rs, "content-too-large") {
		t.Errorf("the next run does not report content-too-large: %v\n%s", rs, r.String())
	}
	if r.Requests > 20 {
		t.Errorf("the next run made %d requests", r.Requests)
	}
}

// An agent that makes the issue body 6 MiB long does not switch the guard
// off either: content-too-large, the label and the status comment, and no
// write touches the body.
func TestHugeBodyIsAViolation(t *testing.T) {
	f := newFixture(t)
	agent := f.User(t, "agent", giteatest.PermWrite)
	body := example(t, "healthy.md")
	n, d := f.Open(t, "huge body", body, "cascade::depth-2", "size::medium")
	f.Run(t, d).Expect(t, 0, "pass")

	huge := body(n) + "\n\n" + hugeText(6<<20) + "\n"
	hugeAPI(t, f, agent, http.MethodPatch, f.Path("/issues/%d", n), map[string]string{"body": huge}, nil)
	d = f.Runs.Next(t, actiontest.From("issues", "edited", n, agent.Login))
	before := hugeIssue(t, f, n)
	began := time.Now()
	r := f.Run(t, d)
	t.Logf("the run on the big body: %d requests in %s", r.Requests, time.Since(began).Round(time.Millisecond))
	r.Expect(t, 1, "fail")
	vs := contentTooLarge(t, r)
	if len(vs) != 1 || !strings.Contains(vs[0].Message, "body") {
		t.Fatalf("expected one content-too-large finding on the body, got %+v\n%s", vs, r.String())
	}
	after := hugeIssue(t, f, n)
	if !after.Has("permission::violation") {
		t.Errorf("permission::violation was not set: %v", after.LabelNames())
	}
	if after.ContentVersion != before.ContentVersion || after.Body != huge {
		t.Errorf("the body was written: content version %d, then %d", before.ContentVersion, after.ContentVersion)
	}
	if st := hugeStatus(t, f, n); !strings.Contains(st.Body, "content-too-large") {
		t.Errorf("the status comment does not report content-too-large:\n%.3000s", st.Body)
	}
}
