// Package containertest runs the action's container for real in tests: a
// private Docker engine (Debian's docker.io) on a socket of its own, with
// local stand-ins for the base images the Dockerfile names, so that the
// Dockerfile builds unmodified on a machine that reaches no image registry.
//
// The engine's data root, holding the stand-in images, is cached between runs
// under the project's cache directory (see giteatest.CacheDir), keyed by the
// Go version and go.sum. Every start clears what earlier runs built, so each
// run builds the action's image from its Dockerfile again.
//
// A package opts in with
//
//	func TestMain(m *testing.M) { containertest.Main(m) }
//
// and each test asks for the shared engine with Require. Like the real-Gitea
// tests, these run when GNS_GUARD_INTEGRATION=1 or CI is set, and then fail,
// never skip, when the engine cannot be provisioned.
package containertest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gns-guard/gns-guard/internal/testkit"
	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// recipeVersion changes when the stand-in images change, so that a cached
// data root made by an older recipe is not reused.
const recipeVersion = "7"

const (
	engineStartTimeout = time.Minute
	engineStopTimeout  = 20 * time.Second
)

// Engine is a running private Docker engine. Its fields are read-only.
type Engine struct {
	// Host is the engine's address for DOCKER_HOST: unix://<socket>.
	Host string
	// Socket is the path of the engine's unix socket.
	Socket string
	// Images are the stand-in images, by the name the Dockerfile or the
	// runner's job label uses.
	Images StandIns

	dockerd   string // dockerd binary
	docker    string // docker CLI
	cacheDir  string // keyed cache directory: lock, data root, log
	dataRoot  string
	execRoot  string
	configDir string // DOCKER_CONFIG of the tests' docker commands
	logPath   string

	cmd    *exec.Cmd
	done   chan struct{}
	werr   error
	unlock func()

	stopOnce sync.Once
	stopErr  error
}

// StandIns names the local images that stand in for the registry's.
type StandIns struct {
	// Builder is the Dockerfile's build stage image (golang:...).
	Builder string
	// Base is the Dockerfile's final stage image (distroless static).
	Base string
	// Job is a small image (busybox) the runner's job containers run in.
	Job string
}

// JobImage is the stand-in job container image the test runner's label
// names: busybox's shell and tools, nothing else.
const JobImage = "gns-guard-test/job:busybox"

// Start provisions and starts a private engine: it checks that dockerd,
// the docker CLI and a static busybox are installed (.ci/run installs
// Debian's docker.io and busybox-static), takes the cache directory's lock
// (one engine per data root; a second process waits), starts dockerd on a
// private socket without touching the host's networking, imports the
// stand-in images if the cache lacks them, and removes every container,
// volume and image but the stand-ins. The caller must Stop it.
func Start(ctx context.Context) (_ *Engine, err error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("containertest: the test Docker engine runs dockerd, which needs root; run the tests as root (CI does)")
	}
	e := &Engine{}
	if e.dockerd, err = exec.LookPath("dockerd"); err != nil {
		return nil, fmt.Errorf("containertest: no dockerd on PATH: install Debian's docker.io (apt-get install -y docker.io; .ci/run does): %w", err)
	}
	if e.docker, err = exec.LookPath("docker"); err != nil {
		return nil, fmt.Errorf("containertest: no docker CLI on PATH: install Debian's docker.io (apt-get install -y docker.io; .ci/run does): %w", err)
	}
	root, err := testkit.Root()
	if err != nil {
		return nil, err
	}
	if e.Images, err = standInNames(root); err != nil {
		return nil, err
	}
	goVersion, err := goEnv(ctx, "GOVERSION")
	if err != nil {
		return nil, err
	}
	if err := checkGoTag(e.Images.Builder, goVersion); err != nil {
		return nil, err
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		return nil, fmt.Errorf("containertest: %w", err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n%s\n", recipeVersion, goVersion, e.Images.Builder, e.Images.Base)
	h.Write(sum)
	key := hex.EncodeToString(h.Sum(nil))

	cache, err := giteatest.CacheDir()
	if err != nil {
		return nil, err
	}
	e.cacheDir = filepath.Join(filepath.Dir(cache), "docker-"+goVersion+"-"+key[:12])
	e.dataRoot = filepath.Join(e.cacheDir, "data")
	e.logPath = filepath.Join(e.cacheDir, "dockerd.log")
	// The socket path must stay short (108 bytes): a fixed directory per
	// cache key, used only while holding the key's lock.
	e.execRoot = filepath.Join(os.TempDir(), "gnsg-docker-"+key[:12])
	e.Socket = filepath.Join(e.execRoot, "docker.sock")
	e.Host = "unix://" + e.Socket

	if err := os.MkdirAll(e.cacheDir, 0o755); err != nil {
		return nil, fmt.Errorf("containertest: %w", err)
	}
	if e.unlock, err = giteatest.LockFile(ctx, filepath.Join(e.cacheDir, "lock"), "another test process's Docker engine to stop"); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			if tail := tailOfFile(e.logPath, 3072); tail != "" {
				err = fmt.Errorf("%w\n--- dockerd log tail (%s) ---\n%s", err, e.logPath, tail)
			}
			_ = e.Stop()
		}
	}()
	removeStaleCaches(filepath.Dir(e.cacheDir), e.cacheDir)
	if err := e.cleanStale(); err != nil {
		return e, err
	}
	if e.configDir, err = os.MkdirTemp("", "gnsg-docker-config-"); err != nil {
		return e, fmt.Errorf("containertest: %w", err)
	}
	if err := e.startDaemon(ctx); err != nil {
		return e, err
	}
	if err := e.ensureStandIns(ctx, root); err != nil {
		return e, err
	}
	if err := e.clearBuilt(ctx); err != nil {
		return e, err
	}
	return e, nil
}

// startDaemon runs dockerd on the private socket and waits until it answers.
// No iptables rules, no bridge: containers use the host's network.
func (e *Engine) startDaemon(ctx context.Context) error {
	for _, d := range []string{e.dataRoot, e.execRoot} {
		if err := os.MkdirAll(d, 0o711); err != nil {
			return fmt.Errorf("containertest: %w", err)
		}
	}
	config := filepath.Join(e.execRoot, "daemon.json")
	if err := os.WriteFile(config, []byte("{}\n"), 0o644); err != nil {
		return fmt.Errorf("containertest: %w", err)
	}
	logFile, err := os.Create(e.logPath)
	if err != nil {
		return fmt.Errorf("containertest: %w", err)
	}
	defer logFile.Close()
	cmd := exec.Command(e.dockerd,
		"--config-file", config,
		"--log-level=warn",
		"--iptables=false", "--ip-masq=false", "--bridge=none",
		"--storage-driver=overlay2",
		"-H", e.Host,
		"--data-root", e.dataRoot,
		"--exec-root", e.execRoot,
		"--pidfile", filepath.Join(e.execRoot, "dockerd.pid"),
	)
	cmd.Env = engineEnv()
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Setpgid:   true,
		Pdeathsig: syscall.SIGKILL, // a crashed test process does not leave it running
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("containertest: starting dockerd: %w", err)
	}
	e.cmd = cmd
	e.done = make(chan struct{})
	go func() {
		e.werr = cmd.Wait()
		close(e.done)
	}()

	deadline := time.NewTimer(engineStartTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-e.done:
			return fmt.Errorf("containertest: dockerd exited during start-up: %v", e.werr)
		case <-ctx.Done():
			return fmt.Errorf("containertest: waiting for dockerd: %w", ctx.Err())
		case <-deadline.C:
			return fmt.Errorf("containertest: dockerd did not answer on %s within %s", e.Socket, engineStartTimeout)
		case <-tick.C:
			if e.ping(ctx) {
				return nil
			}
		}
	}
}

func (e *Engine) ping(ctx context.Context) bool {
	c := &http.Client{
		Timeout: 2 * time.Second,
		Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", e.Socket)
		}},
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://docker/_ping", nil)
	if err != nil {
		return false
	}
	resp, err := c.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// Env is the environment for docker commands against this engine: the
// process's, with DOCKER_HOST at the private socket, the legacy builder
// (which does not pull base images that exist locally) and a docker
// configuration directory of its own (logins stay out of ~/.docker).
func (e *Engine) Env() []string {
	env := []string{}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "DOCKER_HOST", "DOCKER_CONTEXT", "DOCKER_BUILDKIT", "DOCKER_CONFIG", "DOCKER_TLS_VERIFY", "DOCKER_CERT_PATH":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "DOCKER_HOST="+e.Host, "DOCKER_BUILDKIT=0", "DOCKER_CONFIG="+e.configDir)
}

// Docker runs the docker CLI against the engine with stdin (may be nil)
// and returns its standard output. An error carries the command and its
// standard error.
func (e *Engine) Docker(ctx context.Context, stdin io.Reader, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, e.docker, args...)
	cmd.Env = e.Env()
	cmd.Stdin = stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("docker %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(stderr.Bytes()))
	}
	return stdout.String(), nil
}

// Command prepares a docker CLI command against the engine, for callers
// that stream its output.
func (e *Engine) Command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, e.docker, args...)
	cmd.Env = e.Env()
	return cmd
}

// clearBuilt removes every container and volume and every image but the
// stand-ins: what an earlier run built (the action's image among them) is
// built again.
func (e *Engine) clearBuilt(ctx context.Context) error {
	ids, err := e.Docker(ctx, nil, "ps", "-aq")
	if err != nil {
		return fmt.Errorf("containertest: %w", err)
	}
	if f := strings.Fields(ids); len(f) > 0 {
		if _, err := e.Docker(ctx, nil, append([]string{"rm", "-f", "-v"}, f...)...); err != nil {
			return fmt.Errorf("containertest: %w", err)
		}
	}
	if _, err := e.Docker(ctx, nil, "volume", "prune", "-f"); err != nil {
		return fmt.Errorf("containertest: %w", err)
	}
	return e.RemoveImagesExcept(ctx)
}

// RemoveImagesExcept removes every image but the stand-ins and the images
// named in keep (repository:tag), with the build cache they left.
func (e *Engine) RemoveImagesExcept(ctx context.Context, keep ...string) error {
	keepSet := map[string]bool{}
	for _, k := range append([]string{e.Images.Builder, e.Images.Base, e.Images.Job}, keep...) {
		keepSet[withTag(k)] = true
	}
	out, err := e.Docker(ctx, nil, "image", "ls", "-a", "--no-trunc", "--format", "{{.Repository}}:{{.Tag}} {{.ID}}")
	if err != nil {
		return fmt.Errorf("containertest: %w", err)
	}
	keepIDs := map[string]bool{}
	type image struct{ ref, id string }
	var all []image
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		ref, id, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		all = append(all, image{ref, id})
		if keepSet[ref] {
			keepIDs[id] = true
		}
	}
	var refs []string
	seen := map[string]bool{}
	for _, im := range all {
		if keepIDs[im.id] || seen[im.ref+im.id] {
			continue
		}
		seen[im.ref+im.id] = true
		if strings.HasSuffix(im.ref, ":<none>") {
			// untagged: an intermediate image, or one pulled by digest
			refs = append(refs, im.id)
		} else {
			refs = append(refs, im.ref)
		}
	}
	if len(refs) > 0 {
		if _, err := e.Docker(ctx, nil, append([]string{"image", "rm", "-f"}, refs...)...); err != nil {
			// Intermediate images go with their children; one already
			// gone is not an error.
			if !strings.Contains(err.Error(), "No such image") {
				return fmt.Errorf("containertest: %w", err)
			}
		}
	}
	return nil
}

// withTag returns an image reference with its tag, :latest if it has none.
func withTag(ref string) string {
	if strings.Contains(ref[strings.LastIndex(ref, "/")+1:], ":") || strings.Contains(ref, "@") {
		return ref
	}
	return ref + ":latest"
}

// Stop stops dockerd (SIGTERM, SIGKILL after a grace period), unmounts what
// it left mounted, removes its run-time directory and releases the cache
// lock. The data root, with the stand-in images, stays for the next run. It
// is safe to call more than once.
func (e *Engine) Stop() error {
	e.stopOnce.Do(func() {
		if e.cmd != nil && e.cmd.Process != nil {
			_ = e.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-e.done:
			case <-time.After(engineStopTimeout):
				_ = e.cmd.Process.Kill()
				<-e.done
			}
		}
		if e.execRoot != "" {
			if err := unmountUnder(e.dataRoot, e.execRoot); err != nil {
				e.stopErr = err
			}
			if err := os.RemoveAll(e.execRoot); err != nil && e.stopErr == nil {
				e.stopErr = fmt.Errorf("containertest: %w", err)
			}
		}
		if e.configDir != "" {
			_ = os.RemoveAll(e.configDir)
		}
		if e.unlock != nil {
			e.unlock()
		}
	})
	return e.stopErr
}

// LogTail returns the end of dockerd's log, for failure messages.
func (e *Engine) LogTail() string { return tailOfFile(e.logPath, 4096) }

// cleanStale stops what a crashed earlier run left of this engine (its
// dockerd and containerd, found by their pid files) and unmounts what they
// left mounted. The caller holds the cache lock, so they are not in use.
func (e *Engine) cleanStale() error {
	for _, pidFile := range []string{
		filepath.Join(e.execRoot, "dockerd.pid"),
		filepath.Join(e.execRoot, "containerd", "containerd.pid"),
	} {
		b, err := os.ReadFile(pidFile)
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 1 {
			continue
		}
		comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		if c := strings.TrimSpace(string(comm)); c == "dockerd" || c == "containerd" {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			for i := 0; i < 100 && syscall.Kill(pid, 0) == nil; i++ {
				time.Sleep(50 * time.Millisecond)
			}
		}
	}
	if err := unmountUnder(e.dataRoot, e.execRoot); err != nil {
		return err
	}
	if err := os.RemoveAll(e.execRoot); err != nil {
		return fmt.Errorf("containertest: removing a stale %s: %w", e.execRoot, err)
	}
	return nil
}

// unmountUnder lazily unmounts every mount point under the directories,
// deepest first.
func unmountUnder(dirs ...string) error {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return fmt.Errorf("containertest: %w", err)
	}
	defer f.Close()
	var points []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		p := unescapeMount(fields[4])
		for _, d := range dirs {
			if d != "" && (p == d || strings.HasPrefix(p, d+"/")) {
				points = append(points, p)
			}
		}
	}
	sort.Slice(points, func(i, j int) bool { return len(points[i]) > len(points[j]) })
	var failed []string
	for _, p := range points {
		if err := syscall.Unmount(p, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
			failed = append(failed, p+": "+err.Error())
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("containertest: could not unmount: %s", strings.Join(failed, "; "))
	}
	return nil
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space, ...).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// removeStaleCaches removes the data roots of other cache keys (an older
// Go or go.sum) that no process is using.
func removeStaleCaches(parent, current string) {
	matches, _ := filepath.Glob(filepath.Join(parent, "docker-*"))
	for _, dir := range matches {
		if dir == current {
			continue
		}
		f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			continue
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			if unmountUnder(filepath.Join(dir, "data")) == nil {
				_ = os.RemoveAll(dir)
			}
		}
		f.Close()
	}
}

// engineEnv is dockerd's environment: the test's, without DOCKER_*
// variables.
func engineEnv() []string {
	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DOCKER_") {
			env = append(env, kv)
		}
	}
	return env
}

// goEnv returns one variable of `go env`.
func goEnv(ctx context.Context, name string) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", name).Output()
	if err != nil {
		return "", fmt.Errorf("containertest: go env %s: %w", name, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// tailOfFile returns at most the last n bytes of the file, or "".
func tailOfFile(path string, n int64) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	if int64(len(b)) > n {
		b = b[int64(len(b))-n:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	return string(b)
}
