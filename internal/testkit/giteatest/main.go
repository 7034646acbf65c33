package giteatest

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"
)

// EnvIntegration is the variable that turns real-Gitea tests on ("1"). They
// are also on whenever CI is non-empty, so CI never skips them.
const EnvIntegration = "GNS_GUARD_INTEGRATION"

// startBudget bounds building (cold: several minutes) plus starting Gitea.
const startBudget = 25 * time.Minute

var shared struct {
	mu      sync.Mutex
	inMain  bool          // Main is running the package's tests
	once    sync.Once     // the first Require starts the server
	srv     *Server       // the started server, if any
	err     error         // why it did not start
	elapsed time.Duration // how long Start took
}

// Enabled reports whether real-Gitea tests run: GNS_GUARD_INTEGRATION=1, or
// CI set to anything.
func Enabled() bool {
	return os.Getenv(EnvIntegration) == "1" || os.Getenv("CI") != ""
}

// Main runs a package's tests; call it from TestMain. The shared server is
// started lazily by the first Require (so a run selecting only unit tests
// never starts Gitea) and stopped after the tests, also when TestMain
// panics. If the test process crashes, Gitea is killed by the kernel
// (Pdeathsig) and its work directory is removed by the next Start.
func Main(m *testing.M) {
	os.Exit(Run(m))
}

// Parallel is how many parallel tests of a package under Main run at once
// unless -parallel says: its tests mostly wait on the server, so more of
// them than the CPUs (go test's default) keep the server and the CPUs busy.
const Parallel = 8

// Run is Main without the exit: it runs the package's tests, stops the
// shared runner and server, and returns the exit code, for a TestMain that
// has more to stop afterwards (see internal/testkit/containertest).
func Run(m *testing.M) int {
	parallelByDefault(Parallel)
	shared.mu.Lock()
	shared.inMain = true
	shared.mu.Unlock()
	defer stopShared()
	defer func() {
		for _, f := range atExit.list() {
			f()
		}
	}()
	return m.Run()
}

// parallelByDefault sets -test.parallel to n unless the command line set
// it.
func parallelByDefault(n int) {
	if !flag.Parsed() {
		flag.Parse()
	}
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", strconv.Itoa(n))
	}
}

// atExit are the clean-ups Run makes after the package's tests.
var atExit cleanups

type cleanups struct {
	mu sync.Mutex
	fs []func()
}

func (c *cleanups) list() []func() {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fs
}

// AtExit registers f to run once the package's tests are done (under Main
// or Run), e.g. to remove a binary built for all of them.
func AtExit(f func()) {
	atExit.mu.Lock()
	defer atExit.mu.Unlock()
	atExit.fs = append(atExit.fs, f)
}

func stopShared() {
	stopSharedRunner() // before the server it talks to
	shared.mu.Lock()
	srv := shared.srv
	shared.srv = nil
	shared.mu.Unlock()
	if srv != nil {
		if err := srv.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
}

// skipMessage explains how to run a skipped real-Gitea test.
func skipMessage() string {
	where := "~/.cache/gns-guard/gitea-v" + Version
	if dir, err := CacheDir(); err == nil {
		where = dir
	}
	return fmt.Sprintf("real-Gitea test skipped: set %s=1 to build (once, cached at %s) and run Gitea %s", EnvIntegration, where, Version)
}

// Require returns the package's shared server, starting it on first use. It
// skips the test when real-Gitea tests are not enabled (see Enabled). When
// they are enabled and the server could not be built or started, the test
// fails (never skips) with the reason and Gitea's log tail. The package's
// TestMain must call Main.
func Require(t testing.TB) *Server {
	t.Helper()
	if !Enabled() {
		t.Skip(skipMessage())
	}
	shared.mu.Lock()
	inMain := shared.inMain
	shared.mu.Unlock()
	if !inMain {
		t.Fatal("giteatest.Require: the package needs func TestMain(m *testing.M) { giteatest.Main(m) }")
	}
	shared.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), startBudget)
		defer cancel()
		began := time.Now()
		srv, err := Start(ctx)
		shared.mu.Lock()
		shared.srv, shared.err, shared.elapsed = srv, err, time.Since(began)
		shared.mu.Unlock()
		if err == nil {
			t.Logf("giteatest: Gitea %s ready at %s in %s", Version, srv.URL, shared.elapsed.Round(time.Millisecond))
		}
	})
	shared.mu.Lock()
	srv, err := shared.srv, shared.err
	shared.mu.Unlock()
	if err != nil {
		t.Fatalf("real Gitea %s is not available: %v", Version, err)
	}
	if srv == nil {
		t.Fatal("giteatest: the shared Gitea server was already stopped")
	}
	return srv
}
