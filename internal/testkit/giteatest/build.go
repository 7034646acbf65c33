package giteatest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Version is the Gitea release every real-Gitea test runs against.
const Version = "1.26.0"

// modulePath is the Go module Gitea is built from.
const modulePath = "code.gitea.io/gitea"

// CacheDir returns the directory that holds the built Gitea binary:
// $GNS_GUARD_CACHE/gitea-v1.26.0, or else $XDG_CACHE_HOME/gns-guard/gitea-v1.26.0,
// or else ~/.cache/gns-guard/gitea-v1.26.0. It lies outside the repository
// and survives between test runs.
func CacheDir() (string, error) {
	root := os.Getenv("GNS_GUARD_CACHE")
	if root == "" {
		if x := os.Getenv("XDG_CACHE_HOME"); x != "" && filepath.IsAbs(x) {
			root = filepath.Join(x, "gns-guard")
		} else {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", fmt.Errorf("giteatest: no cache directory: set GNS_GUARD_CACHE (%w)", err)
			}
			root = filepath.Join(home, ".cache", "gns-guard")
		}
	}
	root, err := filepath.Abs(root)
	if err != nil {
		return "", fmt.Errorf("giteatest: cache directory: %w", err)
	}
	return filepath.Join(root, "gitea-v"+Version), nil
}

// binaryPathNoBuild is where BinaryPath keeps the binary.
func binaryPathNoBuild() (string, error) {
	dir, err := CacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "gitea"), nil
}

// goTool returns the go command to run: the one on PATH (go test puts
// GOROOT/bin first on the PATH of test binaries).
func goTool() (string, error) {
	p, err := exec.LookPath("go")
	if err != nil {
		return "", fmt.Errorf("giteatest: the go command is needed to fetch and build Gitea %s: %w", Version, err)
	}
	return p, nil
}

// goEnv is the environment for go commands run on Gitea's module: no
// workspace, and never this repository's go.mod.
func goEnv() []string {
	env := make([]string, 0, len(os.Environ())+2)
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "GOWORK=") || strings.HasPrefix(kv, "GOFLAGS=") || strings.HasPrefix(kv, "CGO_ENABLED=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "GOWORK=off", "GOFLAGS=-mod=readonly -buildvcs=false", "CGO_ENABLED=1")
}

// ModuleDir returns the directory of Gitea's source module in the Go module
// cache (read-only), downloading it through the module proxy if needed. Gitea
// serves its templates and locales from there (STATIC_ROOT_PATH), because the
// test binary is built without bindata.
func ModuleDir(ctx context.Context) (string, error) {
	dir, err := downloadModule(ctx, modulePath+"@v"+Version)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(dir, "options", "locale")); err != nil {
		return "", fmt.Errorf("giteatest: Gitea module directory %s looks incomplete: %w", dir, err)
	}
	return dir, nil
}

// downloadModule downloads mod (path@version) through the module proxy and
// returns its directory in the module cache (read-only).
func downloadModule(ctx context.Context, mod string) (string, error) {
	goBin, err := goTool()
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, goBin, "mod", "download", "-json", mod)
	cmd.Dir = os.TempDir() // outside any module: never touches this repository's go.mod
	cmd.Env = goEnv()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var info struct {
		Dir   string
		Error string
	}
	if jerr := json.Unmarshal(out, &info); jerr == nil && info.Error != "" {
		return "", fmt.Errorf("giteatest: go mod download %s: %s", mod, info.Error)
	}
	if err != nil {
		return "", fmt.Errorf("giteatest: go mod download %s: %w: %s", mod, err, bytes.TrimSpace(stderr.Bytes()))
	}
	if info.Dir == "" {
		return "", fmt.Errorf("giteatest: go mod download %s gave no module directory: %s", mod, out)
	}
	return info.Dir, nil
}

// BinaryPath returns the path of a Gitea 1.26.0 binary built from the module
// proxy, building it first if the cache lacks it. A cold build takes several
// minutes and needs a C compiler (SQLite is linked through cgo). Concurrent
// callers, in this and other processes, wait for one build under an
// exclusive lock on a file in the cache directory.
func BinaryPath(ctx context.Context) (string, error) {
	bin, err := binaryPathNoBuild()
	if err != nil {
		return "", err
	}
	if _, err := exec.LookPath(cc()); err != nil && !isExecutable(bin) {
		return "", fmt.Errorf("giteatest: building Gitea %s needs a C compiler for SQLite (cgo); %q not found: %w", Version, cc(), err)
	}
	return giteaRecipe.cached(ctx, bin)
}

// giteaRecipe builds Gitea inside its module directory (go install refuses
// the module because its go.mod has replace directives).
var giteaRecipe = recipe{
	what:    "Gitea " + Version,
	version: Version,
	takes:   "several minutes",
	modDir:  ModuleDir,
	flags: []string{"-tags", "sqlite sqlite_unlock_notify",
		"-ldflags", "-s -w -X main.Version=" + Version},
}

// recipe is how a program the tests need is built from the module proxy.
type recipe struct {
	what    string // for messages, e.g. "Gitea 1.26.0"
	version string // what the built program's --version must mention
	takes   string // how long a cold build takes, for the message
	modDir  func(context.Context) (string, error)
	flags   []string // go build flags besides -trimpath and -o
}

// cached returns bin, building it first if the cache lacks it. Concurrent
// callers, in this and other processes, wait for one build under an
// exclusive lock on a file beside bin.
func (r recipe) cached(ctx context.Context, bin string) (string, error) {
	if isExecutable(bin) {
		return bin, nil
	}
	dir := filepath.Dir(bin)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("giteatest: %w", err)
	}
	unlock, err := LockFile(ctx, filepath.Join(dir, "build.lock"), "another process's build in "+dir)
	if err != nil {
		return "", err
	}
	defer unlock()
	if isExecutable(bin) { // built by someone else while we waited
		return bin, nil
	}
	if err := r.build(ctx, bin); err != nil {
		return "", err
	}
	return bin, nil
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// LockFile takes an exclusive flock on path, polling so that ctx can
// cancel the wait; while it waits it says once on stderr that it waits for
// what. The returned function releases it.
func LockFile(ctx context.Context, path, what string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	told := false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				_ = f.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			_ = f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		if !told {
			fmt.Fprintf(os.Stderr, "waiting for %s (lock %s)\n", what, path)
			told = true
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, fmt.Errorf("waiting for %s (lock %s): %w", what, path, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// build compiles the program inside its module directory, checks that it
// reports its version, and renames it into place. The caller holds the
// build lock.
func (r recipe) build(ctx context.Context, bin string) error {
	modDir, err := r.modDir(ctx)
	if err != nil {
		return err
	}
	goBin, err := goTool()
	if err != nil {
		return err
	}
	tmp := bin + ".tmp"
	logPath := filepath.Join(filepath.Dir(bin), "build.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return fmt.Errorf("giteatest: %w", err)
	}
	defer logFile.Close()

	fmt.Fprintf(os.Stderr, "giteatest: building %s once into %s (takes %s; log %s)\n", r.what, bin, r.takes, logPath)
	began := time.Now()
	args := append(append([]string{"build", "-trimpath"}, r.flags...), "-o", tmp, ".")
	cmd := exec.CommandContext(ctx, goBin, args...)
	cmd.Dir = modDir
	cmd.Env = goEnv()
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	if err := cmd.Run(); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("giteatest: building %s failed: %w\n%s", r.what, err, tailOfFile(logPath, 4096))
	}
	out, err := exec.CommandContext(ctx, tmp, "--version").CombinedOutput()
	if err != nil || !strings.Contains(string(out), r.version) {
		_ = os.Remove(tmp)
		return fmt.Errorf("giteatest: the built %s does not report version %s: %v: %s", r.what, r.version, err, out)
	}
	if err := os.Rename(tmp, bin); err != nil {
		return fmt.Errorf("giteatest: %w", err)
	}
	fmt.Fprintf(os.Stderr, "giteatest: built %s in %s\n", r.what, time.Since(began).Round(time.Second))
	return nil
}

// cc is the C compiler cgo will use.
func cc() string {
	if c := strings.Fields(os.Getenv("CC")); len(c) > 0 {
		return c[0]
	}
	return "gcc"
}

// tailOfFile returns at most the last n bytes of the file, or "".
func tailOfFile(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return ""
	}
	off := fi.Size() - n
	if off < 0 {
		off = 0
	}
	buf := make([]byte, fi.Size()-off)
	k, _ := f.ReadAt(buf, off)
	s := string(buf[:k])
	if off > 0 {
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			s = s[i+1:]
		}
	}
	return s
}
