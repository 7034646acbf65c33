package actiontest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/action"
	"github.com/gns-guard/gns-guard/internal/cli"
	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/forge"
	"github.com/gns-guard/gns-guard/internal/port"
)

// InProcess is the world RunInProcess gives action mode besides the step's
// environment. Zero fields take what the binary uses.
type InProcess struct {
	// NewForge connects to the server (default: forge.New with its
	// defaults, as the binary does). Tests wrap it, e.g. to shorten the
	// request timeout with forge.WithTimeout.
	NewForge action.ForgeFunc
	// Now reads the clock (default time.Now).
	Now func() time.Time
}

// ForgeWithTimeout connects as the binary does, with a request timeout of
// d instead of forge.DefaultTimeout.
func ForgeWithTimeout(d time.Duration) action.ForgeFunc {
	return func(apiURL, token, owner, repo string) (port.Forge, error) {
		return forge.New(apiURL, token, owner, repo, forge.WithTimeout(d))
	}
}

// RunInProcess runs action mode in this process with the environment Run
// gives the binary: the same code, without a process start per run.
func (s Step) RunInProcess(t testing.TB, d Delivery, o InProcess) Result {
	t.Helper()
	res, err := s.runInProcess(context.Background(), d, o)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func (s Step) runInProcess(ctx context.Context, d Delivery, o InProcess) (Result, error) {
	dir, env, err := s.prepare(d)
	if err != nil {
		return Result{}, err
	}
	defer os.RemoveAll(dir)
	vars := make(map[string]string, len(env))
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	if o.NewForge == nil {
		o.NewForge = func(apiURL, token, owner, repo string) (port.Forge, error) {
			return forge.New(apiURL, token, owner, repo)
		}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	var stdout, stderr bytes.Buffer
	err = action.Run(ctx, action.Options{
		Getenv:     func(k string) string { return vars[k] },
		Stdout:     &stdout,
		Stderr:     &stderr,
		ReadFile:   os.ReadFile,
		AppendFile: cli.System().AppendFile,
		NewForge:   o.NewForge,
		Now:        o.Now,
	})
	return collect(dir, exitcode.Code(err), stdout.String(), stderr.String())
}

// Process is a guard binary started by Start: tests can kill it mid-run.
type Process struct {
	cmd            *exec.Cmd
	dir            string
	stdout, stderr bytes.Buffer
	done           chan struct{}
	waitErr        error
}

// Start starts the binary on one delivery, as Run does, and returns at
// once. Wait collects what it left behind.
func (s Step) Start(t testing.TB, d Delivery) *Process {
	t.Helper()
	bin := Binary(t)
	dir, env, err := s.prepare(d)
	if err != nil {
		t.Fatal(err)
	}
	p := &Process{dir: dir, done: make(chan struct{})}
	p.cmd = exec.Command(bin, "action")
	p.cmd.Env, p.cmd.Dir = env, dir
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	if err := p.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		t.Fatalf("actiontest: starting gns-guard: %v", err)
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = p.Kill()
		<-p.done
		os.RemoveAll(dir)
	})
	return p
}

// Kill kills the process (SIGKILL): no deferred code of it runs.
func (p *Process) Kill() error {
	select {
	case <-p.done:
		return nil
	default:
	}
	return p.cmd.Process.Kill()
}

// Killed reports whether the process ended by a signal.
func (p *Process) Killed() bool {
	<-p.done
	var ee *exec.ExitError
	return errors.As(p.waitErr, &ee) && ee.ExitCode() == -1
}

// Wait waits up to two minutes for the process to end (killing it after)
// and returns what it left behind. A killed process has Code -1.
func (p *Process) Wait(t testing.TB) Result {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(2 * time.Minute):
		_ = p.Kill()
		<-p.done
	}
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(p.waitErr, &ee):
		code = ee.ExitCode()
	case p.waitErr != nil:
		t.Fatalf("actiontest: running gns-guard: %v", p.waitErr)
	}
	res, err := collect(p.dir, code, p.stdout.String(), p.stderr.String())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// prepare writes the event, output and summary files into a new directory
// and returns it with the step's environment.
func (s Step) prepare(d Delivery) (dir string, env []string, err error) {
	dir, err = os.MkdirTemp("", "gns-guard-step-")
	if err != nil {
		return "", nil, err
	}
	event := filepath.Join(dir, "event.json")
	output := filepath.Join(dir, "output")
	summary := filepath.Join(dir, "summary")
	for _, f := range []string{output, summary} {
		if err := os.WriteFile(f, nil, 0o600); err != nil {
			os.RemoveAll(dir)
			return "", nil, err
		}
	}
	if err := os.WriteFile(event, d.Payload, 0o600); err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	env, err = s.environ(d, event, output, summary)
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	return dir, env, nil
}

// collect reads what a run left in dir, as Run does.
func collect(dir string, code int, stdout, stderr string) (Result, error) {
	res := Result{Code: code, Stdout: stdout, Stderr: stderr, Requests: -1}
	out, err := os.ReadFile(filepath.Join(dir, "output"))
	if err != nil {
		return res, err
	}
	if res.Outputs, err = ParseOutputs(string(out)); err != nil {
		return res, fmt.Errorf("%w\nstdout:\n%s", err, res.Stdout)
	}
	sum, err := os.ReadFile(filepath.Join(dir, "summary"))
	if err != nil {
		return res, err
	}
	res.Summary = string(sum)
	res.ReadLog()
	return res, nil
}

// ReadLog fills the request counts and the writes from the run's log
// (Stdout): what the guard says it asked and wrote.
func (res *Result) ReadLog() {
	if m := requestsLine.FindAllStringSubmatch(res.Stdout, -1); m != nil {
		res.Requests, _ = strconv.Atoi(m[len(m)-1][1])
	}
	if m := adminRequestsLine.FindAllStringSubmatch(res.Stdout, -1); m != nil {
		res.AdminRequests, _ = strconv.Atoi(m[len(m)-1][1])
	}
	for _, line := range strings.Split(res.Stdout, "\n") {
		if w, ok := strings.CutPrefix(line, "gns-guard: wrote: "); ok {
			res.Writes = append(res.Writes, w)
		}
	}
}
