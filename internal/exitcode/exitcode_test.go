package exitcode

import (
	"errors"
	"fmt"
	"testing"
)

func TestCode(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, Clean},
		{"violations", ErrViolations, Violation},
		{"wrapped violations", fmt.Errorf("issue #3: %w", ErrViolations), Violation},
		{"usage", &UsageError{errors.New("bad flag")}, Usage},
		{"reported usage", &Reported{&UsageError{errors.New("input x")}}, Usage},
		{"cannot run", &CannotRunError{errors.New("connection refused")}, CannotRun},
		{"reported cannot run", &Reported{&CannotRunError{errors.New("401")}}, CannotRun},
		{"unclassified is never a pass", errors.New("something"), CannotRun},
		{"stopped by Ctrl-C", fmt.Errorf("count: %w", &StoppedError{Signal: "SIGINT", Code: Interrupted}), Interrupted},
		{"stopped by SIGTERM", &StoppedError{Signal: "SIGTERM", Code: Terminated}, Terminated},
		{"checks not made", ErrUnchecked, Unchecked},
	}
	for _, c := range cases {
		if got := Code(c.err); got != c.want {
			t.Errorf("%s: Code = %d, want %d", c.name, got, c.want)
		}
	}
	if !IsReported(&Reported{ErrViolations}) || IsReported(&UsageError{errors.New("x")}) {
		t.Error("IsReported must see a Reported error, and only that")
	}
}
