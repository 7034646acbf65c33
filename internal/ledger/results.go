package ledger

import (
	"encoding/json"
	"fmt"
)

// ResultRef is an agent result the guard accepted (its report's state
// became the baseline): the comment's id, the agent it speaks as, and the
// digest of its text. An accepted result may not vanish or change
// (docs/ledger.md#accepted-results). In the record it is a compact array,
// [id, agent, digest].
type ResultRef struct {
	ID     int64
	Agent  string
	Digest string
}

// MarshalJSON writes the ref as [id, agent, digest].
func (r ResultRef) MarshalJSON() ([]byte, error) {
	return json.Marshal([]any{r.ID, r.Agent, r.Digest})
}

// UnmarshalJSON reads the array MarshalJSON writes.
func (r *ResultRef) UnmarshalJSON(data []byte) error {
	var a []json.RawMessage
	if err := json.Unmarshal(data, &a); err != nil {
		return err
	}
	if len(a) != 3 {
		return fmt.Errorf("a result has 3 fields, found %d", len(a))
	}
	for i, dst := range []any{&r.ID, &r.Agent, &r.Digest} {
		if err := json.Unmarshal(a[i], dst); err != nil {
			return err
		}
	}
	return nil
}

// ResultDigest is what a ResultRef keeps of a comment's text.
func ResultDigest(body string) string { return Digest([]string{"result", body}) }

// MaxResults keeps the newest accepted results since the last archive.
const MaxResults = 30

// CommentsSeen is what a run saw of the comments: their count as
// the server gave it, and the highest id among those it read. The next
// run counts the comments newer than Last it reads: fewer in all than
// Count and those says comments were deleted since, and it looks for the
// accepted results it cannot see.
type CommentsSeen struct {
	Count int   `json:"count"`
	Last  int64 `json:"last"`
}
