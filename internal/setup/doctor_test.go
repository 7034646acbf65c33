package setup

import (
	"bytes"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/posture"
)

// doctor tells "could not check" apart from "does not hold": its own
// state in the text and the JSON, exit 4 when every check made holds and
// some could not be made, and 1 whenever one made does not hold.
func TestDoctorCouldNotCheck(t *testing.T) {
	held := posture.Check{ID: "a.held", Holds: true, Why: "fine", Logins: []string{}}
	unread := posture.Check{ID: "b.unread", Why: posture.CouldNotCheck + "the token may not read the secrets", Logins: []string{}}
	broken := posture.Check{ID: "c.broken", Why: "main is not protected", Logins: []string{}}
	for _, c := range []struct {
		checks []posture.Check
		code   int
		text   []string
	}{
		{[]posture.Check{held}, exitcode.Clean, []string{"holds  a.held", "Every guarantee of the threat model holds (1 checks)."}},
		{[]posture.Check{held, unread}, exitcode.Unchecked, []string{"could not check  b.unread  the token may not read the secrets",
			"Every check that could be made holds (1 of 2). 1 could not be checked with the tokens given"}},
		{[]posture.Check{held, unread, broken}, exitcode.Violation, []string{"BROKEN           c.broken", "1 of 3 guarantees do not hold", "1 could not be checked"}},
	} {
		d := &Diagnosis{Facts: posture.Facts{Repo: "o/r", DefaultBranch: "main"}, Server: "http://gitea.test", Checks: checks(c.checks)}
		if got := exitcode.Code(d.Outcome()); got != c.code {
			t.Errorf("%v: exit %d, want %d", c.checks, got, c.code)
		}
		var b bytes.Buffer
		if err := d.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		for _, want := range c.text {
			if !strings.Contains(b.String(), want) {
				t.Errorf("doctor's text lacks %q:\n%s", want, b.String())
			}
		}
	}
	if d := checks([]posture.Check{unread})[0]; d.State != "could not check" || d.Why != "the token may not read the secrets" || d.Holds {
		t.Errorf("an unread check: %+v", d)
	}
}
