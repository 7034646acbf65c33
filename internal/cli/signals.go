package cli

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/gns-guard/gns-guard/internal/exitcode"
)

// withSignals returns a context that SIGINT (Ctrl-C) or SIGTERM cancels,
// its cause an *exitcode.StoppedError naming the signal, and the function
// that stops listening. Once the first signal has cancelled the work the
// process no longer catches them: a second Ctrl-C ends it at once.
func withSignals(parent context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-ch:
			signal.Stop(ch)
			cancel(stopped(s))
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel(nil)
	}
}

// stopped is the error a signal stops the run with.
func stopped(s os.Signal) *exitcode.StoppedError {
	if s == syscall.SIGTERM {
		return &exitcode.StoppedError{Signal: "SIGTERM", Code: exitcode.Terminated}
	}
	return &exitcode.StoppedError{Signal: "SIGINT", Code: exitcode.Interrupted}
}

// stoppedBy is the error a run ends with when a signal cancelled ctx and
// the work failed or was cut short: the signal's, whatever the verb made
// of the cancellation; otherwise err.
func stoppedBy(ctx context.Context, err error) error {
	var se *exitcode.StoppedError
	if err != nil && errors.As(context.Cause(ctx), &se) {
		return se
	}
	return err
}

// graceAfterSignal is how long a run may take to wind down once a signal
// has cancelled it: long work looks at its context far more often, and a
// read that cannot look (standard input from a terminal) is abandoned.
const graceAfterSignal = 500 * time.Millisecond

// drainOf is how long the verb args call may wind down after a signal.
func drainOf(args []string) time.Duration {
	if len(args) > 0 {
		if v, ok := verbCalled(args[0]); ok && v.drain > 0 {
			return v.drain
		}
	}
	return graceAfterSignal
}

// untilStopped runs work and returns its error, but once a signal has
// cancelled ctx it waits at most grace more and then returns
// the signal's error, so Ctrl-C ends every verb within a second. Writes to
// the server are cut by the cancelled context, not by this: each is one
// request the server applies whole or not at all.
func untilStopped(ctx context.Context, grace time.Duration, work func() error) error {
	done := make(chan error, 1)
	go func() { done <- work() }()
	select {
	case err := <-done:
		return stoppedBy(ctx, err)
	case <-ctx.Done():
	}
	var se *exitcode.StoppedError
	if !errors.As(context.Cause(ctx), &se) {
		return stoppedBy(ctx, <-done) // the caller's cancellation: the verb answers it
	}
	select {
	case err := <-done:
		return stoppedBy(ctx, err)
	case <-time.After(grace):
		return se
	}
}
