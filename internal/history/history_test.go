package history

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/live"
	"github.com/gns-guard/gns-guard/internal/markdown"
	"github.com/gns-guard/gns-guard/internal/prune"
)

// key is the guard's ledger key.
var key = []byte("a9ea060ac451d2b0cdb750a8d574abb969ed4deb4e5724a239af4185a9f5f088")

// pruned is issue 42 read whole after one prune: its archive part, an
// impostor's copy, and the guard's status comment recording the part. It
// returns the entries the history must hold.
func pruned(t *testing.T) (*live.Snapshot, []prune.Entry) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "prune", "history-full.md"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := prune.DefaultConfig()
	cfg.Signer = ledger.SecretKeys(key).ArchiveSigner()
	res, err := prune.Plan(string(data), checkpoint.Parse(string(data), checkpoint.Options{}), 42, nil, time.Date(2026, 5, 17, 8, 0, 0, 0, time.UTC), cfg)
	if err != nil {
		t.Fatal(err)
	}
	status := issues.Comment{ID: 4, Author: "gitea-actions", HTMLURL: "http://gitea.test/org/proj/issues/42#issuecomment-4",
		Body: issues.StatusMarker(42) + "\n" + ledger.Encode(ledger.Record{Issue: 42, Baseline: true, Archive: res.Head, Archived: res.Count, Pending: []string{}}, key) + "\n"}
	s := &live.Snapshot{Issue: issues.Issue{Number: 42, Body: res.Body}, Guard: "gitea-actions", Status: &status}
	s.Recent.Comments = []issues.Comment{
		{ID: 1, Author: "alice", Body: "a comment"},
		{ID: 2, Author: "gitea-actions", Body: res.Archives[0]},
		{ID: 3, Author: "mallory", Body: res.Archives[0]},
		status,
	}
	return s, append(append([]prune.Entry(nil), res.Archived...), res.Kept...)
}

func TestRebuild(t *testing.T) {
	s, want := pruned(t)
	r := Rebuild(Input{Snapshot: s, Issue: 42, Keys: ledger.SecretKeys(key)})
	if len(r.Entries) != len(want) || len(r.Problems) != 0 {
		t.Fatalf("%d entries, want %d; problems %q", len(r.Entries), len(want), r.Problems)
	}
	for i, e := range r.Entries {
		source := "checkpoint"
		if i < len(want)-3 {
			source = "archive"
		}
		if e.Seq != i+1 || e.Agent != want[i].Agent || e.Source != source {
			t.Errorf("entry %d: %+v, want %+v from the %s", i, e, want[i], source)
		}
	}
	var errOut strings.Builder
	r.WriteProblems(&errOut)
	if want := "gns-guard: history: note: archive comments by \"mallory\" were not trusted (only \"gitea-actions\"'s are); pass --trust LOGIN to read them\n"; errOut.String() != want {
		t.Errorf("stderr %q, want %q", errOut.String(), want)
	}
	yaml, err := r.YAML()
	if err != nil || !strings.HasPrefix(yaml, "- seq: 1\n  agent: ") {
		t.Errorf("%v\n%s", err, yaml)
	}
}

// A body with no checkpoint, and a status comment whose record was
// removed: the history is the archives', and the chain cannot be proven.
func TestRebuildProblems(t *testing.T) {
	s, _ := pruned(t)
	s.Issue.Body = "no checkpoint"
	s.Status = &issues.Comment{ID: 4, Author: "gitea-actions", Body: issues.StatusMarker(42)}
	r := Rebuild(Input{Snapshot: s, Issue: 42, Keys: ledger.SecretKeys(key)})
	if len(r.Problems) < 2 || !strings.HasPrefix(r.Problems[0], "the issue body has no checkpoint block") ||
		r.Problems[1] != "the guard's status comment 4 carries no ledger record: someone removed it: the end of the archive chain cannot be proven" {
		t.Errorf("problems %q", r.Problems)
	}
	if u := Rebuild(Input{Snapshot: s, Issue: 42, Unproven: true}); len(u.Problems) != 1 || len(u.Entries) == 0 {
		t.Errorf("unproven: %d entries, problems %q", len(u.Entries), u.Problems)
	}
}

func TestVerify(t *testing.T) {
	s, want := pruned(t)
	pub, err := ledger.PublicKeys(ledger.PublicKey(key))
	if err != nil {
		t.Fatal(err)
	}
	r := Verify(Input{Snapshot: s, Issue: 42, Keys: pub})
	kid := pub.KeyIDs()[0]
	var out, errOut strings.Builder
	r.WriteText(&out, &errOut)
	if !r.Verified || r.Records != 1 || r.Parts != 1 || len(r.KeyIDs) != 1 || r.KeyIDs[0] != kid || r.Entries != len(want) ||
		out.String() != "issue #42: the history is intact: 1 ledger record and 1 archive part verified, signed by key "+kid+"; "+markdown.Plural(len(want), "history entry")+"\n" ||
		!strings.Contains(errOut.String(), "note: archive comments by \"mallory\" were not checked") {
		t.Errorf("%+v\n%s%s", r, out.String(), errOut.String())
	}

	// The status comment edited: its record no longer verifies.
	s.Status.Body = strings.Replace(s.Status.Body, `"archived":`, `"archived": `, 1)
	s.Recent.Comments[3] = *s.Status
	r = Verify(Input{Snapshot: s, Issue: 42, Keys: pub})
	out.Reset()
	errOut.Reset()
	r.WriteText(&out, &errOut)
	if r.Verified || len(r.Problems) == 0 || r.Problems[0].Comment != 4 || out.Len() != 0 ||
		!strings.HasSuffix(errOut.String(), "gns-guard: history: issue #42: verification failed: "+markdown.Plural(len(r.Problems), "problem")+"\n") {
		t.Errorf("%+v\n%s%s", r, out.String(), errOut.String())
	}
}

func TestProblemString(t *testing.T) {
	for _, tc := range []struct {
		p    Problem
		want string
	}{
		{Problem{Message: "m"}, "m"},
		{Problem{Comment: 7, Message: "m"}, "comment 7: m"},
		{Problem{Comment: 7, URL: "http://x/7", Message: "m"}, "comment 7 (http://x/7): m"},
	} {
		if got := tc.p.String(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.p, got, tc.want)
		}
	}
}
