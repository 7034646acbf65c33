// Package gateway runs Portkey's open-source AI gateway
// (@portkey-ai/gateway, pinned by package-lock.json here), by Node.js, and
// measures it beside gns-guard meter (Bench): internal/cli's
// BenchmarkBesidePortkey.
//
// Install puts the pinned package, with npm ci, in a cache folder outside
// the repository named after the lock file's hash
// (~/.cache/gns-guard/gateway-HASH), as packages sdkclient and mcpclient
// do; install scripts are not run (the only one, Portkey's postinstall,
// runs patch-package, and the package publishes no patches). Start runs
// the package's "bin", build/start-server.js, as its start:node script
// does, with --port=N on a free port and --headless (no web console), and
// with preload.cjs, which makes its streams work on Node 20 (read its
// comment), and loopback.cjs, which keeps it on 127.0.0.1. Portkey is told
// where to send a call by the headers Headers returns.
package gateway

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// Version is the gateway's version package.json pins.
const Version = "1.15.2"

var (
	//go:embed package.json
	packageJSON []byte
	//go:embed package-lock.json
	packageLock []byte
	//go:embed preload.cjs
	preloadScript []byte
	//go:embed loopback.cjs
	loopbackScript []byte
)

// Install installs the pinned gateway once per lock file and returns the
// folder whose node_modules holds it.
func Install() (string, error) {
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			return "", fmt.Errorf("gateway: %s is not on PATH: apt-get install nodejs npm (as root), or run .ci/run", tool)
		}
	}
	gitea, err := giteatest.CacheDir()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(packageLock)
	dir := filepath.Join(filepath.Dir(gitea), "gateway-"+hex.EncodeToString(sum[:8]))
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@portkey-ai", "gateway", "package.json")); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".gateway-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	for name, data := range map[string][]byte{"package.json": packageJSON, "package-lock.json": packageLock} {
		if err := os.WriteFile(filepath.Join(tmp, name), data, 0o644); err != nil {
			return "", err
		}
	}
	cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error")
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("gateway: npm ci: %v\n%s", err, out)
	}
	// Another process may have installed it meanwhile: either copy is
	// whole.
	if err := os.Rename(tmp, dir); err != nil && !os.IsExist(err) {
		if _, statErr := os.Stat(dir); statErr != nil {
			return "", fmt.Errorf("gateway: %w", err)
		}
	}
	return dir, nil
}

// Gateway is a running Portkey gateway.
type Gateway struct {
	// URL is its base URL, http://127.0.0.1:PORT; an OpenAI client is
	// given URL+"/v1".
	URL string
	// PID is the node process's id (its /proc/PID/status has its RSS).
	PID int
	// Stop ends the process and waits for it; it may be called again.
	Stop func()
}

// Headers are the headers that send a call through Portkey to an
// OpenAI-compatible provider at upstream (a base URL before /v1): Portkey's
// x-portkey-provider and x-portkey-custom-host (build/start-server.js,
// its header constants PROVIDER and CUSTOM_HOST). The provider's key goes
// in Authorization, which Portkey forwards.
func Headers(upstream string) http.Header {
	return http.Header{
		"X-Portkey-Provider":    {"openai"},
		"X-Portkey-Custom-Host": {strings.TrimRight(upstream, "/") + "/v1"},
	}
}

// Start installs the gateway and starts it on a free port of 127.0.0.1,
// and returns when it answers. Its output goes to log (nil: discarded).
func Start(log *os.File) (*Gateway, error) {
	dir, err := Install()
	if err != nil {
		return nil, err
	}
	for name, data := range map[string][]byte{"preload.cjs": preloadScript, "loopback.cjs": loopbackScript} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return nil, err
		}
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("node", "--require", "./preload.cjs", "--require", "./loopback.cjs",
		filepath.Join("node_modules", "@portkey-ai", "gateway", "build", "start-server.js"),
		"--port="+strconv.Itoa(port), "--headless")
	cmd.Dir = dir
	if log != nil {
		cmd.Stdout, cmd.Stderr = log, log
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("gateway: node: %w", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	var once sync.Once
	g := &Gateway{URL: "http://127.0.0.1:" + strconv.Itoa(port), PID: cmd.Process.Pid}
	g.Stop = func() {
		once.Do(func() {
			_ = cmd.Process.Signal(os.Interrupt)
			select {
			case <-exited:
			case <-time.After(5 * time.Second):
				_ = cmd.Process.Kill()
				<-exited
			}
		})
	}
	if err := ready(g.URL, exited); err != nil {
		g.Stop()
		return nil, err
	}
	return g, nil
}

// ready waits until the gateway answers GET / ("AI Gateway says hey!").
func ready(url string, exited <-chan struct{}) error {
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			return errors.New("gateway: node ended before it answered (its output is in the log)")
		default:
		}
		resp, err := c.Get(url + "/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return errors.New("gateway: no answer on " + url + " within 60s")
}

// freePort is a port of 127.0.0.1 free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
