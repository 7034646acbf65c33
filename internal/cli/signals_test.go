package cli_test

import (
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
)

// interrupt starts the built binary on args with the given standard
// input, feeds it, sends sig once the process has taken the whole feed (it
// is then past its start, in the verb's work) and returns its exit code
// and output. A run that outlives the signal by far is killed and fails
// the test (the bound only ends a broken run; no timing is asserted).
func interrupt(t *testing.T, sig os.Signal, feed []byte, keepOpen bool, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(actiontest.Binary(t), args...)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The pipe holds 64 KiB: the write returns once the process has read
	// the rest, so the signal reaches a process already at work.
	if _, err := in.Write(feed); err != nil {
		t.Fatal(err)
	}
	if !keepOpen {
		in.Close()
	}
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err = <-exited:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		<-exited
		t.Fatalf("gns-guard %s did not stop after %v; stdout %q", strings.Join(args, " "), sig, out.String())
	}
	in.Close()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errOut.String()
}

// Ctrl-C stops a long count: `tokens` on 30 MB (tens of seconds of work)
// ends with exit 130 and prints no count.
func TestInterruptStopsTokens(t *testing.T) {
	text := bytes.Repeat([]byte("aGVsbG8gd29ybGQ/K3Rva2Vucw=="), 30<<20/28)
	code, stdout, stderr := interrupt(t, os.Interrupt, text, false, "tokens", "-")
	if code != exitcode.Interrupted || stdout != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d and no count", code, stdout, stderr, exitcode.Interrupted)
	}
	if !strings.Contains(stderr, "stopped by SIGINT") {
		t.Errorf("stderr does not say what stopped the run: %q", stderr)
	}
}

// SIGTERM stops a verb that waits on standard input (a read that cannot
// look at its context) with exit 143, and --format json answers with the
// error object.
func TestTerminateStopsAWaitingRead(t *testing.T) {
	feed := bytes.Repeat([]byte("word "), 1<<20/5)
	code, stdout, _ := interrupt(t, syscall.SIGTERM, feed, true, "check", "-", "--format", "json")
	if code != exitcode.Terminated {
		t.Fatalf("exit %d, want %d", code, exitcode.Terminated)
	}
	if !strings.Contains(stdout, `"kind":"stopped"`) || !strings.Contains(stdout, "SIGTERM") {
		t.Errorf("stdout is not the JSON error naming the signal: %q", stdout)
	}
}

// Ctrl-C stops a report waiting on the server, and says how to finish
// it: the same report again with the same --invocation.
func TestInterruptedReportSaysHowToFinish(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cmd := exec.Command(actiontest.Binary(t), "report", "--repo", "o/r", "--issue", "2", "--agent", "dev", "--invocation", "inv-7",
		"--consumed", "100", "--action", "did it", "--server", "http://"+ln.Addr().String(), "--token", "t")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	conn, err := ln.Accept() // the report asks the server: it is at work
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case <-exited:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatal("report did not stop after SIGINT")
	}
	if code := cmd.ProcessState.ExitCode(); code != exitcode.Interrupted ||
		!strings.Contains(stderr.String(), "stopped by SIGINT") || !strings.Contains(stderr.String(), "run the same report again with --invocation inv-7") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}
