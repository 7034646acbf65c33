package containertest

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// startBudget bounds provisioning the engine: waiting for another process's
// engine, starting dockerd and importing the stand-ins (seconds each, and
// minutes when the golang stand-in's build cache is made: see buildCache).
const startBudget = 30 * time.Minute

var shared struct {
	mu     sync.Mutex
	inMain bool
	once   sync.Once
	e      *Engine
	err    error
}

// Main runs a package's tests; call it from TestMain. It is giteatest.Main
// (the shared Gitea and runner) plus the shared engine, started by the
// first Require and stopped after the runner that uses it.
func Main(m *testing.M) {
	shared.mu.Lock()
	shared.inMain = true
	shared.mu.Unlock()
	code := giteatest.Run(m)
	shared.mu.Lock()
	e := shared.e
	shared.e = nil
	shared.mu.Unlock()
	if e != nil {
		if err := e.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			if code == 0 {
				code = 1
			}
		}
	}
	os.Exit(code)
}

// Require returns the package's shared engine, starting it on first use. It
// skips the test unless GNS_GUARD_INTEGRATION=1 or CI is set (see
// giteatest.Enabled); when they are, a failure to provision the engine fails
// the test with the reason.
func Require(t testing.TB) *Engine {
	t.Helper()
	if !giteatest.Enabled() {
		t.Skipf("container test skipped: set %s=1 to run the action's image in a private Docker engine (needs root and Debian's docker.io and busybox-static)", giteatest.EnvIntegration)
	}
	shared.mu.Lock()
	inMain := shared.inMain
	shared.mu.Unlock()
	if !inMain {
		t.Fatal("containertest.Require: the package needs func TestMain(m *testing.M) { containertest.Main(m) }")
	}
	shared.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), startBudget)
		defer cancel()
		began := time.Now()
		e, err := Start(ctx)
		shared.mu.Lock()
		shared.e, shared.err = e, err
		shared.mu.Unlock()
		if err == nil {
			t.Logf("containertest: Docker engine ready at %s in %s", e.Host, time.Since(began).Round(time.Millisecond))
		}
	})
	shared.mu.Lock()
	e, err := shared.e, shared.err
	shared.mu.Unlock()
	if err != nil {
		t.Fatalf("the test Docker engine is not available: %v", err)
	}
	if e == nil {
		t.Fatal("containertest: the shared engine was already stopped")
	}
	return e
}
