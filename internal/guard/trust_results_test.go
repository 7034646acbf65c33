package guard

import (
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
