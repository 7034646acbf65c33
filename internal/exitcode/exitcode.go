package exitcode

import "errors"

// The exit codes, the same in every mode.
const (
	Clean     = 0 // nothing wrong (or nothing to do)
	Violation = 1 // findings that fail the run
	Usage     = 2 // a usage or configuration error
	CannotRun = 3 // the tool could not do its work (server unreachable, token rejected, ...)
	// Unchecked: doctor made every check it could and each held, but some
	// could not be made (a token that may not read them). A broken check
	// wins: Violation.
	Unchecked = 4

	// Interrupted and Terminated say a signal stopped the run before its
	// work was done: SIGINT (Ctrl-C) and SIGTERM, 128 plus the signal's
	// number as shells report it, so a script tells them from a failure it
	// may retry (3).
	Interrupted = 130
	Terminated  = 143
)

// StoppedError: a signal, exit Code (Interrupted or Terminated).
type StoppedError struct {
	Signal string // SIGINT or SIGTERM
	Code   int
}

func (e *StoppedError) Error() string {
	return "stopped by " + e.Signal + " before the work was done"
}

// ErrViolations: reported already; exit 1, nothing more printed.
var ErrViolations = errors.New("violations found")

// ErrUnchecked: some checks unmade, the rest held; exit 4, nothing printed.
var ErrUnchecked = errors.New("some checks could not be made")

// ViolationError prints its message; exit 1.
type ViolationError struct{ Err error }

func (e *ViolationError) Error() string { return e.Err.Error() }
func (e *ViolationError) Unwrap() error { return e.Err }

// Is makes a ViolationError count as ErrViolations.
func (e *ViolationError) Is(target error) bool { return target == ErrViolations }

// UsageError: a bad flag, input or Actions environment; exit 2.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// CannotRunError: the work could not be done; exit 3.
type CannotRunError struct{ Err error }

func (e *CannotRunError) Error() string { return e.Err.Error() }
func (e *CannotRunError) Unwrap() error { return e.Err }

// Reported: explained already; Err sets the code, nothing more prints.
type Reported struct{ Err error }

func (e *Reported) Error() string { return e.Err.Error() }
func (e *Reported) Unwrap() error { return e.Err }

// Code is the exit code of err: Clean for nil, the signal's code for a
// StoppedError, Violation for ErrViolations, Unchecked for ErrUnchecked,
// Usage for a UsageError, and CannotRun for anything else (an error
// nobody classified is a failure to run, never a pass).
func Code(err error) int {
	var ue *UsageError
	var se *StoppedError
	switch {
	case err == nil:
		return Clean
	case errors.As(err, &se):
		return se.Code
	case errors.Is(err, ErrViolations):
		return Violation
	case errors.Is(err, ErrUnchecked):
		return Unchecked
	case errors.As(err, &ue):
		return Usage
	}
	return CannotRun
}

// IsReported says err was already explained to the user.
func IsReported(err error) bool {
	var r *Reported
	return errors.As(err, &r)
}
