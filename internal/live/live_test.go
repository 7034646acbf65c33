package live

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/posture"
	"github.com/gns-guard/gns-guard/internal/settings"
	"github.com/gns-guard/gns-guard/internal/testkit/fakeforge"
)

const body = "```yaml\ncheckpoint:\n  version: 2\n  issue: 7\n```\n"

var written = time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)

// status is a status comment by author whose record names writer, signed
// with key.
func status(id int64, author, writer string, key []byte, stamp *ledger.ConfigStamp) issues.Comment {
	l := ledger.Record{Issue: 7, Writer: writer, Pending: []string{}, Written: written.Unix(), Config: stamp}
	return issues.Comment{ID: id, Author: author, UpdatedAt: written,
		Body: issues.StatusMarker(7) + "\n## ✅ gns-guard: all clear\n" + ledger.Encode(l, key) + "\n"}
}

// issueWith is issue 7 with three notes, then comments, and a client of
// a reader who may not read permissions.
func issueWith(comments ...issues.Comment) (*fakeforge.Server, *fakeforge.Client) {
	s := fakeforge.New("o/r")
	s.AddIssue(issues.Issue{Number: 7, Body: body}, "alice")
	for i := range 3 {
		s.AddComment(7, issues.Comment{ID: int64(100 + i), Author: "alice", Body: "a note"})
	}
	for _, c := range comments {
		s.AddComment(7, c)
	}
	return s, s.As("reader")
}

func TestReadCleanPassCostsTwoRequests(t *testing.T) {
	_, f := issueWith(status(200, "gitea-actions", "gitea-actions", nil, nil))
	r := &Reader{Forge: f, Guard: issues.ActionsUser}
	s, err := r.Read(context.Background(), 7, ReadOptions{Window: 7})
	if err != nil {
		t.Fatal(err)
	}
	if s.Status == nil || s.Status.ID != 200 || f.Requests() != 2 {
		t.Errorf("status %v after %d requests; want comment 200 after the issue and the timeline", s.Status, f.Requests())
	}
}

// The guard's login, when no one said it, is the writer the signed ledger
// names; a comment by someone else that names itself loses to the
// Actions user's, and with the ledger key only a verifying record counts.
func TestReadFindsTheGuard(t *testing.T) {
	key := []byte("k")
	for _, tt := range []struct {
		name     string
		comments []issues.Comment
		key      []byte
		want     string
		status   int64
	}{
		{"personal token's ledger", []issues.Comment{status(200, "guard-bot", "guard-bot", nil, nil)}, nil, "guard-bot", 200},
		{"an agent's newer copy naming itself", []issues.Comment{status(200, "gitea-actions", "gitea-actions", nil, nil), status(201, "mallory", "mallory", nil, nil)}, nil, "gitea-actions", 200},
		{"a record naming someone else", []issues.Comment{status(201, "mallory", "guard-bot", nil, nil)}, nil, "gitea-actions", 0},
		{"with the key, only the signed one", []issues.Comment{status(200, "guard-bot", "guard-bot", key, nil), status(201, "mallory", "mallory", nil, nil)}, key, "guard-bot", 200},
		{"with the key, an unsigned claim is no one's", []issues.Comment{status(201, "mallory", "mallory", nil, nil)}, key, "gitea-actions", 0},
		{"none", nil, nil, "gitea-actions", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, f := issueWith(tt.comments...)
			r := &Reader{Forge: f, Keys: ledger.SecretKeys(tt.key)}
			s, err := r.Read(context.Background(), 7, ReadOptions{Window: 7})
			if err != nil {
				t.Fatal(err)
			}
			var got int64
			if s.Status != nil {
				got = s.Status.ID
			}
			if s.Guard != tt.want || got != tt.status {
				t.Errorf("guard %q, status %d; want %q, %d", s.Guard, got, tt.want, tt.status)
			}
		})
	}
}

// The guard's own personal token never takes its login from a record it
// cannot verify: it asks the server.
func TestReadGuardTokenAsksWhoItIs(t *testing.T) {
	srv, _ := issueWith(status(201, "mallory", "mallory", nil, nil))
	r := &Reader{Forge: srv.As("guard-bot"), TokenIsGuard: true}
	s, err := r.Read(context.Background(), 7, ReadOptions{Window: 7})
	if err != nil {
		t.Fatal(err)
	}
	if s.Guard != "guard-bot" || s.Status != nil {
		t.Errorf("guard %q, status %v; want guard-bot and no status comment", s.Guard, s.Status)
	}
}

// A status comment buried under a flood of comments is found further back.
func TestReadSearchesBack(t *testing.T) {
	srv, f := issueWith(status(200, "gitea-actions", "gitea-actions", nil, nil))
	for i := range 120 {
		srv.AddComment(7, issues.Comment{ID: int64(300 + i), Author: "alice", Body: "noise"})
	}
	r := &Reader{Forge: f, Guard: issues.ActionsUser}
	s, err := r.Read(context.Background(), 7, ReadOptions{Window: 7})
	if err != nil {
		t.Fatal(err)
	}
	if s.Status == nil || s.Status.ID != 200 || len(s.Older) == 0 {
		t.Errorf("status %v, %d older comments", s.Status, len(s.Older))
	}
	shallow, err := r.Read(context.Background(), 7, ReadOptions{Window: 7, Shallow: true})
	if err != nil {
		t.Fatal(err)
	}
	if shallow.Status != nil {
		t.Errorf("a shallow read found status comment %d beyond the last comments", shallow.Status.ID)
	}
}

// The configuration file is read once per commit: a run for the commit the
// trusted ledger recorded takes the file's settings from the record.
func TestConfigStampedByCommit(t *testing.T) {
	file := []byte("history-tail: 4\nallowed-agents: [lead, reviewer]\n")
	stamp := &ledger.ConfigStamp{Commit: "c1", Found: true, Values: map[string]string{"history-tail": "4", "allowed-agents": "lead\nreviewer"}}
	srv, f := issueWith(status(200, "gitea-actions", "gitea-actions", nil, stamp))
	srv.Files("")[settings.FileName] = file
	r := &Reader{Forge: f, Guard: issues.ActionsUser}
	s, err := r.Read(context.Background(), 7, ReadOptions{Window: 7})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		commit   string
		requests int
	}{{"c1", 0}, {"c2", 1}, {"", 1}} {
		before := f.Requests()
		res, st, err := r.Config(context.Background(), s, ConfigOptions{Commit: tt.commit})
		if err != nil {
			t.Fatal(err)
		}
		if requests := f.Requests() - before; requests != int64(tt.requests) || res.Config.HistoryTail != 4 || strings.Join(res.Config.AllowedAgents, ",") != "lead,reviewer" || !st.Equal(&ledger.ConfigStamp{Commit: tt.commit, Found: true, Values: stamp.Values}) {
			t.Errorf("commit %q: %d requests, history-tail %d, agents %v, stamp %+v", tt.commit, requests, res.Config.HistoryTail, res.Config.AllowedAgents, st)
		}
	}
	// An input overrides the file.
	in := settings.InputLayer(func(n string) string { return map[string]string{"history-tail": "5"}[n] })
	res, _, err := r.Config(context.Background(), s, ConfigOptions{Commit: "c1", Top: []settings.Layer{in}})
	if err != nil || res.Config.HistoryTail != 5 {
		t.Errorf("history-tail %d (%v), want the input's 5", res.Config.HistoryTail, err)
	}
}

// The posture is judged once per commit: a run for the commit the trusted
// ledger recorded takes it from the record; another commit, no commit, or
// a record that does not verify, judges it anew.
func TestPostureStampedByCommit(t *testing.T) {
	key := []byte("a ledger key only the guard's workflow can read")
	l := ledger.Record{Issue: 7, Writer: issues.ActionsUser, Pending: []string{}, Written: written.Unix(),
		Posture: ledger.NewPostureStamp("c1", []posture.Check{{ID: posture.CheckCodeWrite, Why: "mallory can push code", Logins: []string{"mallory"}}})}
	c := issues.Comment{ID: 200, Author: issues.ActionsUser, Body: issues.StatusMarker(7) + "\n" + ledger.Encode(l, key) + "\n"}
	s := &Snapshot{Issue: issues.Issue{Number: 7}, Status: &c}
	r := &Reader{Keys: ledger.SecretKeys(key)}
	if st := r.PostureStamped(s, "c1"); !st.Equal(l.Posture) {
		t.Errorf("the same commit: %+v, want the record's stamp", st)
	}
	for _, commit := range []string{"c2", ""} {
		if st := r.PostureStamped(s, commit); st != nil {
			t.Errorf("commit %q: %+v, want none (judge anew)", commit, st)
		}
	}
	other := &Reader{Keys: ledger.SecretKeys([]byte("another key, not the one that signed the record"))}
	if st := other.PostureStamped(s, "c1"); st != nil {
		t.Errorf("a record that does not verify gave %+v", st)
	}
	if st := r.PostureStamped(&Snapshot{Issue: issues.Issue{Number: 7}}, "c1"); st != nil {
		t.Errorf("no status comment gave %+v", st)
	}
}

// A bad configuration file is a configuration error naming the file, the
// key and its line; an unreadable server is a failure to run.
func TestConfigErrors(t *testing.T) {
	srv, f := issueWith()
	srv.Files("")[settings.FileName] = []byte("history-tail: 4\nprune-treshold: 0.5\n")
	r := &Reader{Forge: f, Where: Where{Verb: "report", Server: "http://x", Repo: "o/r"}}
	_, _, err := r.Config(context.Background(), nil, ConfigOptions{})
	var ue *exitcode.UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), ".gitea/gns-guard.yml:2:1: prune-treshold") || !strings.Contains(err.Error(), `"prune-threshold"`) {
		t.Errorf("error %v", err)
	}
	srv.Inject(fakeforge.Fault{Unreachable: true})
	_, _, err = r.Config(context.Background(), nil, ConfigOptions{})
	if exitcode.Code(err) != exitcode.CannotRun || !strings.HasPrefix(err.Error(), "report: could not reach the server http://x to read .gitea/gns-guard.yml") {
		t.Errorf("error %v (exit %d)", err, exitcode.Code(err))
	}
}

func TestErrorsSayWhatAndWhere(t *testing.T) {
	w := Where{Verb: "history", Server: "http://x", Repo: "o/r", TokenSource: "GITEA_TOKEN", TokenHint: "pass a valid one with --token", Scopes: "read:issue and read:repository"}
	for _, tt := range []struct {
		err  error
		want string
		code int
	}{
		{issues.ErrUnauthorized, "history: the server http://x rejected the token from GITEA_TOKEN (HTTP 401) when trying to read issue #7: it is wrong, expired or revoked; pass a valid one with --token, with the scopes read:issue and read:repository", exitcode.CannotRun},
		{issues.ErrForbidden, "history: the token from GITEA_TOKEN may not read issue #7 in o/r (HTTP 403): history needs a token with the scopes read:issue and read:repository whose user may do this in the repository", exitcode.CannotRun},
		{issues.ErrNotFound, "history: could not read issue #7 in o/r: it does not exist, or the token cannot see it (HTTP 404)", exitcode.Usage},
		{issues.ErrUnreachable, "history: could not reach the server http://x to read issue #7", exitcode.CannotRun},
		{errors.New("boom"), "history: could not read issue #7 at http://x: GET: boom", exitcode.CannotRun},
	} {
		err := w.Error("read issue #7", fmt.Errorf("GET: %w", tt.err))
		if exitcode.Code(err) != tt.code || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%v: %q (exit %d), want %q (exit %d)", tt.err, err, exitcode.Code(err), tt.want, tt.code)
		}
	}
	w.TokenSource = ""
	if err := w.Error("read issue #7", issues.ErrUnauthorized); !strings.Contains(err.Error(), "needs a token to read issue #7 (HTTP 401) and none was given: pass --token or set GITEA_TOKEN, a token with the scopes read:issue and read:repository") {
		t.Errorf("no token: %q", err)
	}
}

// A refusal for want of a scope names the scope the token lacks, the
// token, and what it needs: the verb's scopes, or its row of the table.
func TestRefusalNamesTheMissingScope(t *testing.T) {
	lacks := &issues.ScopeError{Missing: []string{"read:user"}}
	verb := Where{Verb: "report", Server: "http://x", Repo: "o/r", TokenSource: "GITEA_TOKEN", Scopes: "write:issue, read:repository and read:user"}
	action := Where{Server: "http://x", Repo: "o/r", TokenHint: "check the token input", Token: "the token input", Needs: "GNS_GUARD_TOKEN needs the scopes a and b"}
	for _, c := range []struct {
		w    Where
		err  error
		want string
	}{
		{verb, lacks, "report: the token from GITEA_TOKEN lacks the scope read:user, which it needs to look up the token's user in o/r (HTTP 403): report needs a token with the scopes write:issue, read:repository and read:user ("},
		{action, lacks, "the token input lacks the scope read:user, which it needs to look up the token's user in o/r (HTTP 403): GNS_GUARD_TOKEN needs the scopes a and b ("},
		{action, &issues.ScopeError{PublicOnly: true}, "the token input may not look up the token's user in o/r (HTTP 403): it reaches public repositories and organisations only; GNS_GUARD_TOKEN needs"},
		{action, issues.ErrForbidden, "the token input may not look up the token's user in o/r (HTTP 403): give it the access this needs"},
	} {
		err := c.w.Error("look up the token's user", fmt.Errorf("GET /api/v1/user: %w", c.err))
		if exitcode.Code(err) != exitcode.CannotRun || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%v: %q (exit %d), want %q (exit 3)", c.err, err, exitcode.Code(err), c.want)
		}
	}
}

// A missing issue is a usage error (exit 2), which says whether the issue
// or the repository is missing when the server can tell.
func TestMissingIssueOrRepository(t *testing.T) {
	w := Where{Verb: "report", Server: "http://x", Repo: "o/r"}
	cases := []struct {
		exists func(context.Context) (bool, error)
		want   string
	}{
		{nil, "report: issue #9999 does not exist in o/r (or the token cannot see it)"},
		{func(context.Context) (bool, error) { return true, nil }, "report: issue #9999 does not exist in o/r"},
		{func(context.Context) (bool, error) { return false, nil }, "report: the repository o/r does not exist on http://x (or the token cannot see it)"},
		{func(context.Context) (bool, error) { return false, errors.New("down") }, "report: issue #9999 does not exist in o/r (or the token cannot see it)"},
	}
	for _, c := range cases {
		w.RepoExists = c.exists
		err := w.missing(context.Background(), 9999)
		if exitcode.Code(err) != exitcode.Usage || err.Error() != c.want {
			t.Errorf("%q (exit %d), want %q", err, exitcode.Code(err), c.want)
		}
	}
}

// A question the token may not ask is a no with a note; with no admin
// client it is a no without asking.
func TestIsAdmin(t *testing.T) {
	_, f := issueWith()
	r := &Reader{Forge: f, Admin: f}
	for range 2 {
		ok, note, err := r.isAdmin(context.Background(), "carol")
		if ok || err != nil || !strings.Contains(note, `"carol" is a repository admin could not be checked`) {
			t.Errorf("admin %v, note %q, err %v", ok, note, err)
		}
	}
	none := &Reader{Forge: f}
	if ok, note, err := none.isAdmin(context.Background(), "carol"); ok || note != "" || err != nil {
		t.Errorf("without an admin client: %v %q %v", ok, note, err)
	}
}
