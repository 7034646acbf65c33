package ledger

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/posture"
)

// A stamp keeps the checks that did not hold, bounded, and nothing of
// those that held.
func TestPostureStampKeepsWhatDoesNotHold(t *testing.T) {
	many := make([]string, 80)
	for i := range many {
		many[i] = fmt.Sprintf("agent-%02d", i)
	}
	st := NewPostureStamp("abc", []posture.Check{
		{ID: posture.CheckWorkflow, Holds: true, Why: "present", Logins: []string{}},
		{ID: posture.CheckCodeWrite, Why: strings.Repeat("é", 2*MaxPostureWhy), Logins: many},
		{ID: posture.CheckStatus, Why: "main is not protected"},
	})
	if st.Commit != "abc" || len(st.Broken) != 2 || st.Broken[0].ID != posture.CheckCodeWrite || st.Broken[1].ID != posture.CheckStatus {
		t.Fatalf("stamp %+v", st)
	}
	code := st.Broken[0]
	if n := utf8.RuneCountInString(code.Why); n != MaxPostureWhy || !strings.HasSuffix(code.Why, "…") || len(code.Logins) != MaxPostureLogins || code.Logins[0] != "agent-00" {
		t.Errorf("not bounded: %d runes, %d logins", n, len(code.Logins))
	}
	if st.Broken[1].Logins == nil {
		t.Error("a check with no logins keeps nil: its JSON would say null")
	}
	if empty := NewPostureStamp("abc", nil); empty.Broken == nil || !empty.Equal(&PostureStamp{Commit: "abc", Broken: []posture.Check{}}) {
		t.Errorf("a posture that holds: %+v", empty)
	}
}

// The stamp is part of the signed record: read back as written, and an
// edit of it (an agent hiding its own name) breaks the signature.
func TestPostureStampIsSigned(t *testing.T) {
	l := accepted()
	l.Posture = NewPostureStamp("abc", []posture.Check{{ID: posture.CheckCodeWrite, Why: "mallory (write collaborator) can push code", Logins: []string{"mallory"}}})
	line := Encode(l, testKey)
	c := &issues.Comment{ID: 3, Body: line}
	got, problem := Read(c, 9, SecretKeys(testKey))
	if problem != "" || got == nil || !got.Posture.Equal(l.Posture) || !got.SameState(l) {
		t.Fatalf("read back %+v, problem %q", got, problem)
	}
	other := l
	other.Posture = NewPostureStamp("def", nil)
	if l.SameState(other) || other.SameState(l) {
		t.Error("two records with different posture stamps hold the same state: the new one would not be written")
	}
	c.Body = strings.Replace(line, "mallory", "nobody!", 2)
	if got, problem := Read(c, 9, SecretKeys(testKey)); got != nil || !strings.Contains(problem, "does not verify") {
		t.Errorf("an edited stamp was trusted: %+v %q", got, problem)
	}
}
