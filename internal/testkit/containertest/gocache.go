package containertest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// cachePlatforms are the platforms the release builds
// (.gitea/workflows/release.yml); the Dockerfile builds the first.
var cachePlatforms = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64"}

// buildCache gives the golang stand-in a Go build cache where the go
// command of the golang image keeps it (/root/.cache/go-build): gns-guard
// built for each release platform as the Dockerfile and the release build
// it. A build's results depend only on its inputs, so the image and the
// release come out the same; what no longer happens in every run is the
// compile of the standard library and the modules once per platform
// (minutes: modernc.org/sqlite alone is most of it). The project's own
// packages compile again when they changed.
func buildCache(ctx context.Context, r *rootfs, root string) error {
	dir, unlock, err := goBuildCache(ctx, root)
	if err != nil {
		return err
	}
	defer unlock()
	return r.tree(dir, "root/.cache/go-build", nil)
}

// goBuildCache returns the build cache buildCache copies, made if the
// machine lacks it, and a function that releases it. It is kept in its own
// directory of the cache, ~/.cache/gns-guard/go-build-<go>-<hash>, made once
// per Go and go.sum (about two CPU-minutes a platform) and kept when a
// data root is made again.
func goBuildCache(ctx context.Context, root string) (string, func(), error) {
	goVersion, err := goEnv(ctx, "GOVERSION")
	if err != nil {
		return "", nil, err
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		return "", nil, fmt.Errorf("containertest: %w", err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n", goVersion, strings.Join(cachePlatforms, " "))
	h.Write(sum)
	cache, err := giteatest.CacheDir()
	if err != nil {
		return "", nil, err
	}
	dir := filepath.Join(filepath.Dir(cache), "go-build-"+goVersion+"-"+hex.EncodeToString(h.Sum(nil))[:12])
	unlock, err := giteatest.LockFile(ctx, dir+".lock", "another test process's Go build cache for the golang stand-in")
	if err != nil {
		return "", nil, err
	}
	if _, err := os.Stat(dir); err == nil {
		return dir, unlock, nil
	}
	if err := fillBuildCache(ctx, root, dir); err != nil {
		unlock()
		return "", nil, err
	}
	removeStaleBuildCaches(dir)
	return dir, unlock, nil
}

// fillBuildCache builds gns-guard for every platform of cachePlatforms
// into a new build cache at dir.
func fillBuildCache(ctx context.Context, root, dir string) error {
	tmp := dir + ".tmp"
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for _, p := range cachePlatforms {
		goos, goarch, _ := strings.Cut(p, "/")
		cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", os.DevNull, "./cmd/gns-guard")
		cmd.Dir = root
		cmd.Env = append(goCommandEnv(), "GOCACHE="+tmp, "CGO_ENABLED=0", "GOOS="+goos, "GOARCH="+goarch)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("containertest: building gns-guard for %s into the golang stand-in's build cache: %w\n%s", p, err, out)
		}
	}
	return os.Rename(tmp, dir)
}

// removeStaleBuildCaches removes the build caches of other Go versions or
// go.sum files that no process is using.
func removeStaleBuildCaches(current string) {
	locks, _ := filepath.Glob(filepath.Join(filepath.Dir(current), "go-build-*.lock"))
	for _, lock := range locks {
		dir := strings.TrimSuffix(lock, ".lock")
		if dir == current {
			continue
		}
		f, err := os.OpenFile(lock, os.O_RDWR, 0)
		if err != nil {
			continue
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			if os.RemoveAll(dir) == nil {
				_ = os.Remove(lock)
			}
		}
		f.Close()
	}
}
