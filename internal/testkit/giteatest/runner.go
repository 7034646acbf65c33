package giteatest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// RunnerVersion is the Gitea Actions runner release the end-to-end tests
// run workflows with.
const RunnerVersion = "1.0.8"

// runnerModule is the Go module the runner is built from.
const runnerModule = "gitea.com/gitea/runner"

// RunnerLabel is the only label the test runner offers: jobs that run on
// ubuntu-latest run directly on this machine (host mode), because no Docker
// engine is assumed. Steps run with bash in a throw-away work directory.
const RunnerLabel = "ubuntu-latest:host"

const (
	runnerStartTimeout = time.Minute // from exec to "declare successfully"
	runnerBuildBudget  = 10 * time.Minute
)

// RunnerCacheDir returns the directory that holds the built runner: the
// sibling of CacheDir named gitea-runner-v1.0.8.
func RunnerCacheDir() (string, error) {
	dir, err := CacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(filepath.Dir(dir), "gitea-runner-v"+RunnerVersion), nil
}

// RunnerBinaryPath returns the path of a Gitea runner 1.0.8 binary built from
// the module proxy, building it first if the cache lacks it (about a minute;
// no C compiler needed). Concurrent callers wait for one build under a lock,
// as with BinaryPath.
func RunnerBinaryPath(ctx context.Context) (string, error) {
	dir, err := RunnerCacheDir()
	if err != nil {
		return "", err
	}
	return runnerRecipe.cached(ctx, filepath.Join(dir, "gitea-runner"))
}

// runnerRecipe builds the runner inside its module directory, stamped with
// its version.
var runnerRecipe = recipe{
	what:    "the Gitea runner " + RunnerVersion,
	version: RunnerVersion,
	takes:   "about a minute",
	modDir: func(ctx context.Context) (string, error) {
		return downloadModule(ctx, runnerModule+"@v"+RunnerVersion)
	},
	flags: []string{"-ldflags", "-s -w -X " + runnerModule + "/internal/pkg/ver.version=v" + RunnerVersion},
}

// Runner is a registered Gitea Actions runner daemon serving every
// repository of a Server. Its fields are read-only.
type Runner struct {
	// Name is the name it registered under.
	Name string
	// WorkDir holds its configuration, its registration, the work
	// directories of the jobs it runs (host mode) and its log.
	WorkDir string

	config     string
	outPath    string
	dockerHost string
	cmd        *exec.Cmd
	done       chan struct{}
	werr       error

	stopOnce sync.Once
	stopErr  error
}

// StartRunner builds the runner if needed (RunnerBinaryPath), registers it
// with the server under an instance-wide registration token, and starts its
// daemon in its own process group, offering the single label RunnerLabel.
// It returns once the daemon has declared itself to the server. The caller
// must Stop it (before stopping the server); if the calling process dies,
// the kernel kills it (Pdeathsig).
func (s *Server) StartRunner(ctx context.Context) (*Runner, error) {
	return s.StartRunnerWith(ctx, RunnerOptions{})
}

// RunnerOptions says how a runner runs jobs. The zero value is host mode
// with RunnerLabel.
type RunnerOptions struct {
	// Labels the runner offers, e.g. "ubuntu-latest:docker://busybox" for
	// jobs in a container. Empty: RunnerLabel.
	Labels []string
	// DockerHost is the Docker engine for job and action containers
	// (container.docker_host, and DOCKER_HOST in the daemon's environment),
	// e.g. unix:///run/x/docker.sock.
	DockerHost string
	// Network is the containers' network (container.network), e.g. host.
	Network string
	// Instance is the server address the runner registers with and hands
	// the jobs (GITHUB_SERVER_URL, GITHUB_API_URL), e.g. a proxy in front
	// of the server. Empty: the server's URL.
	Instance string
	// Repo, "owner/name", registers the runner with that repository: it
	// runs that repository's jobs and no other's (see RepoRunner). Empty:
	// every repository's.
	Repo string
}

// StartRunnerWith is StartRunner with the labels and the Docker engine of
// opts. Images the job labels name must exist in the engine: the runner
// does not pull them (container.force_pull is off).
func (s *Server) StartRunnerWith(ctx context.Context, opts RunnerOptions) (_ *Runner, err error) {
	if len(opts.Labels) == 0 {
		opts.Labels = []string{RunnerLabel}
	}
	bin, err := RunnerBinaryPath(ctx)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(s.workDir, "runner-*")
	if err != nil {
		return nil, fmt.Errorf("giteatest: %w", err)
	}
	r := &Runner{
		Name:       "giteatest-" + filepath.Base(dir),
		WorkDir:    dir,
		config:     filepath.Join(dir, "config.yaml"),
		outPath:    filepath.Join(dir, "runner.out"),
		dockerHost: opts.DockerHost,
	}
	defer func() {
		if err != nil {
			if tail := tailOfFile(r.outPath, 3072); tail != "" {
				err = fmt.Errorf("%w\n--- runner output tail ---\n%s", err, tail)
			}
			_ = r.Stop()
		}
	}()

	var registration struct {
		Token string `json:"token"`
	}
	where := "/admin/actions/runners/registration-token"
	if opts.Repo != "" {
		owner, name, _ := strings.Cut(opts.Repo, "/")
		where = repoPath(owner, name) + "/actions/runners/registration-token"
	}
	if err := s.api(ctx, http.MethodPost, where, s.AdminToken, nil, &registration); err != nil {
		return r, fmt.Errorf("giteatest: getting a runner registration token: %w", err)
	}
	if registration.Token == "" {
		return r, errors.New("giteatest: getting a runner registration token: empty token in the answer")
	}

	generated, err := r.command(ctx, bin, "generate-config").Output()
	if err != nil {
		return r, fmt.Errorf("giteatest: gitea-runner generate-config: %w", err)
	}
	cfg, err := runnerConfig(generated, dir, opts)
	if err != nil {
		return r, err
	}
	if err := os.WriteFile(r.config, cfg, 0o600); err != nil {
		return r, fmt.Errorf("giteatest: %w", err)
	}

	instance := opts.Instance
	if instance == "" {
		instance = s.URL
	}
	reg := r.command(ctx, bin, "register", "--config", r.config, "--no-interactive",
		"--instance", instance, "--token", registration.Token, "--name", r.Name, "--labels", strings.Join(opts.Labels, ","))
	if out, err := reg.CombinedOutput(); err != nil {
		return r, fmt.Errorf("giteatest: gitea-runner register: %w: %s", err, out)
	}
	if err := r.startDaemon(ctx, bin); err != nil {
		return r, err
	}
	return r, nil
}

// runnerConfig adjusts the configuration `generate-config` printed: the
// registration file, the jobs' work directories and the cache server's
// files under dir; the labels and Docker engine of opts; one job at a time
// (the runner's default); quick polling (a new job waits for the next
// poll); no cache server (no job here needs actions/cache).
func runnerConfig(generated []byte, dir string, opts RunnerOptions) ([]byte, error) {
	var cfg map[string]any
	if err := yaml.Unmarshal(generated, &cfg); err != nil {
		return nil, fmt.Errorf("giteatest: reading the runner's generated configuration: %w", err)
	}
	section := func(name string) map[string]any {
		m, ok := cfg[name].(map[string]any)
		if !ok {
			m = map[string]any{}
			cfg[name] = m
		}
		return m
	}
	section("log")["level"] = "info"
	run := section("runner")
	run["file"] = filepath.Join(dir, ".runner")
	run["capacity"] = 1
	run["envs"] = map[string]any{}
	run["env_file"] = ""
	run["labels"] = opts.Labels
	run["fetch_interval"] = "250ms"
	run["fetch_interval_max"] = "500ms"
	run["log_report_interval"] = "1s"
	run["log_report_max_latency"] = "500ms"
	run["state_report_interval"] = "1s"
	run["shutdown_timeout"] = "0s"
	run["timeout"] = "10m"
	cache := section("cache")
	cache["enabled"] = false
	cache["dir"] = filepath.Join(dir, "cache")
	section("host")["workdir_parent"] = filepath.Join(dir, "jobs")
	if opts.DockerHost != "" {
		c := section("container")
		c["docker_host"] = opts.DockerHost
		c["network"] = opts.Network
		c["force_pull"] = false // job images are local; actions' docker:// images are pulled all the same
		c["force_rebuild"] = false
	}
	section("metrics")["enabled"] = false
	out, err := yaml.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("giteatest: writing the runner configuration: %w", err)
	}
	return out, nil
}

// command prepares a runner command run in the runner's directory with its
// environment.
func (r *Runner) command(ctx context.Context, bin string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = r.WorkDir
	cmd.Env = runnerEnv(r.WorkDir, r.dockerHost)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd
}

// runnerEnv is the environment of the runner and so of the steps it runs on
// the host: the test's, without variables of an outer Actions job (the
// tests must see only what this runner sets) or Docker settings, with a
// HOME of its own and DOCKER_HOST at dockerHost if set.
func runnerEnv(dir, dockerHost string) []string {
	env := []string{}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "GITHUB_"), strings.HasPrefix(name, "GITEA_"),
			strings.HasPrefix(name, "INPUT_"), strings.HasPrefix(name, "ACTIONS_"),
			strings.HasPrefix(name, "RUNNER_"), strings.HasPrefix(name, "DOCKER_"),
			name == "HOME", name == "CI":
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "HOME="+filepath.Join(dir, "home"))
	if dockerHost != "" {
		env = append(env, "DOCKER_HOST="+dockerHost)
	}
	return env
}

// startDaemon runs `gitea-runner daemon` and waits until it has declared
// itself to the server.
func (r *Runner) startDaemon(ctx context.Context, bin string) error {
	if err := os.MkdirAll(filepath.Join(r.WorkDir, "home"), 0o755); err != nil {
		return fmt.Errorf("giteatest: %w", err)
	}
	outFile, err := os.Create(r.outPath)
	if err != nil {
		return fmt.Errorf("giteatest: %w", err)
	}
	defer outFile.Close()
	cmd := exec.Command(bin, "daemon", "--config", r.config)
	cmd.Dir = r.WorkDir
	cmd.Env = runnerEnv(r.WorkDir, r.dockerHost)
	cmd.Stdout = outFile
	cmd.Stderr = outFile
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Setpgid:   true, // Stop signals the daemon and the steps it runs
		Pdeathsig: syscall.SIGKILL,
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("giteatest: starting gitea-runner daemon: %w", err)
	}
	r.cmd = cmd
	r.done = make(chan struct{})
	go func() {
		r.werr = cmd.Wait()
		close(r.done)
	}()

	deadline := time.NewTimer(runnerStartTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-r.done:
			return fmt.Errorf("giteatest: gitea-runner daemon exited during start-up: %v", r.werr)
		case <-ctx.Done():
			return fmt.Errorf("giteatest: waiting for the runner to start: %w", ctx.Err())
		case <-deadline.C:
			return fmt.Errorf("giteatest: the runner did not declare itself to Gitea within %s", runnerStartTimeout)
		case <-tick.C:
			if b, err := os.ReadFile(r.outPath); err == nil && bytes.Contains(b, []byte("declare successfully")) {
				return nil
			}
		}
	}
}

// LogTail returns the end of the daemon's output (the jobs' step output is
// in the server's job logs, not here), for failure messages.
func (r *Runner) LogTail() string {
	if r == nil {
		return ""
	}
	return tailOfFile(r.outPath, 4096)
}

// Stop stops the daemon (SIGTERM to its process group, SIGKILL after a
// grace period). Its directory goes with the server's work directory. It is
// safe to call more than once.
func (r *Runner) Stop() error {
	r.stopOnce.Do(func() {
		if r.cmd == nil || r.cmd.Process == nil {
			return
		}
		pgid := r.cmd.Process.Pid
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-r.done:
		case <-time.After(stopTimeout):
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			<-r.done
		}
		_ = syscall.Kill(-pgid, syscall.SIGKILL) // steps that outlived it
		var ee *exec.ExitError
		if r.werr != nil && !errors.As(r.werr, &ee) {
			r.stopErr = fmt.Errorf("giteatest: stopping the runner: %w", r.werr)
		}
	})
	return r.stopErr
}

var sharedRunner struct {
	mu   sync.Mutex
	once sync.Once
	opts string // the options it was started with, printed
	r    *Runner
	err  error
}

// RequireRunner returns the package's shared runner, registered with the
// shared server (Require) and started on first use; Main stops it after the
// tests, before the server. It skips or fails like Require.
func RequireRunner(t testing.TB) (*Server, *Runner) {
	t.Helper()
	return RequireRunnerWith(t, RunnerOptions{})
}

// RequireRunnerWith is RequireRunner for a runner started with opts. A
// package has one shared runner: asking for it with other options fails the
// test.
func RequireRunnerWith(t testing.TB, opts RunnerOptions) (*Server, *Runner) {
	t.Helper()
	s := Require(t)
	printed := fmt.Sprintf("%+v", opts)
	sharedRunner.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), runnerBuildBudget)
		defer cancel()
		began := time.Now()
		r, err := s.StartRunnerWith(ctx, opts)
		sharedRunner.mu.Lock()
		sharedRunner.r, sharedRunner.err, sharedRunner.opts = r, err, printed
		sharedRunner.mu.Unlock()
		if err == nil {
			t.Logf("giteatest: runner %s %s ready in %s", RunnerVersion, r.Name, time.Since(began).Round(time.Millisecond))
		}
	})
	sharedRunner.mu.Lock()
	r, err, first := sharedRunner.r, sharedRunner.err, sharedRunner.opts
	sharedRunner.mu.Unlock()
	if first != printed {
		t.Fatalf("giteatest: the package's shared runner was started with %s, not %s", first, printed)
	}
	if err != nil {
		t.Fatalf("the Gitea runner %s is not available: %v", RunnerVersion, err)
	}
	if r == nil {
		t.Fatal("giteatest: the shared runner was already stopped")
	}
	return s, r
}

// RepoRunner starts a runner (host mode, RunnerLabel) registered with
// owner/name only and stops it when the test ends. Like the shared runner
// it runs one job at a time, so the repository's jobs run one after the
// other; other tests' jobs run on their own runners meanwhile. A package
// that uses repository runners must not start the shared one
// (RequireRunner), which would run the same jobs besides.
func (s *Server) RepoRunner(t testing.TB, owner, name string) *Runner {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runnerBuildBudget)
	defer cancel()
	r, err := s.StartRunnerWith(ctx, RunnerOptions{Repo: owner + "/" + name})
	if err != nil {
		t.Fatalf("the Gitea runner %s for %s/%s is not available: %v", RunnerVersion, owner, name, err)
	}
	t.Cleanup(func() {
		if err := r.Stop(); err != nil {
			t.Error(err)
		}
	})
	return r
}

// stopSharedRunner stops the shared runner, if one was started.
func stopSharedRunner() {
	sharedRunner.mu.Lock()
	r := sharedRunner.r
	sharedRunner.r = nil
	sharedRunner.mu.Unlock()
	if r != nil {
		if err := r.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
}
