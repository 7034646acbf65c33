package guard

import (
	"github.com/gns-guard/gns-guard/internal/config"
	"testing"

	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
)

// TestDeletedSinceCountsFromTheRecord: the comments newer than the
// record's last, the issue's count and the status comment the record's
// run moved tell a deletion of an older comment; a read that does not
// reach the record's last tells nothing.
func TestDeletedSinceCountsFromTheRecord(t *testing.T) {
	seen := &ledger.CommentsSeen{Count: 10, Last: 100}
	read := []issues.Comment{{ID: 99}, {ID: 100}, {ID: 101}, {ID: 102}}
	for _, c := range []struct {
		name     string
		comments int
		status   int64
		read     []issues.Comment
		want     int
	}{
		{"nothing deleted", 12, 0, read, 0},
		{"one deleted", 11, 0, read, 1},
		{"the status comment moved by the record's run", 11, 102, read, 0},
		{"a read that does not reach the record", 5, 0, read[2:], 0},
	} {
		in := Input{Issue: issues.Issue{Comments: c.comments}}
		if c.status != 0 {
			in.Status = &issues.Comment{ID: c.status}
		}
		e := &decision{in: in}
		if got := max(e.deletedSince(seen, c.read), 0); got != c.want {
			t.Errorf("%s: %d deleted, want %d", c.name, got, c.want)
		}
	}
}

// TestEveryWellFormedResultIsRecorded: a result comment counts as
// accepted however it was posted — its invocation need not be the one the
// checkpoint names (an agent that posts its result through the API before,
// or without, editing the checkpoint) — while a malformed one, one too
// large to judge and one whose author may not speak as its agent are not.
func TestEveryWellFormedResultIsRecorded(t *testing.T) {
	result := func(id int64, author, inv, extra string) issues.Comment {
		return issues.Comment{ID: id, Author: author, Body: "## 🔄 code-reviewer | phase:build | depth:1\n\n**Verdict: REJECTED**\n\n" +
			`<!-- GNS_EVENT {"agent":"code-reviewer","invocation":"` + inv + `","event_type":"subagent_result","phase":"build","depth":1,` +
			`"budget":{"before":10,"consumed":1,"remaining":9},"status":"done","verdict":"REJECTED","files_changed":0,"key_stats":{}` + extra + `,"next_agent":"dev"} -->`}
	}
	in := Input{Self: "guard", Config: config.Default()}
	in.Config.Agents = map[string][]string{"code-reviewer": {"reviewer"}}
	in.Recent = []issues.Comment{
		result(1, "reviewer", "inv-not-in-the-checkpoint", ""),
		result(2, "reviewer", "inv-2", `,"depth":"deep"`), // malformed: a depth that is not a number
		result(3, "intruder", "inv-3", ""),                // may not speak as code-reviewer
		{ID: 4, Author: "reviewer", Body: "just a note"},
	}
	big := result(5, "reviewer", "inv-5", "")
	big.TooLarge = true
	in.Recent = append(in.Recent, big)
	e := &decision{in: in, cfg: in.Config, plan: &Plan{}}
	e.judgeAuthors()
	var l ledger.Record
	e.recordResults(&l, false)
	if len(l.Results) != 1 || l.Results[0].ID != 1 || l.Results[0].Agent != "code-reviewer" || l.Results[0].Digest != ledger.ResultDigest(in.Recent[0].Body) {
		t.Fatalf("recorded %+v; want comment 1 alone", l.Results)
	}
	if l.Seen == nil || l.Seen.Last != 5 {
		t.Errorf("what the run saw of the comments: %+v", l.Seen)
	}
}
