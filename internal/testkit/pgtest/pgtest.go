// Package pgtest starts a throw-away PostgreSQL server for a test: Debian's
// postgresql package (.ci/run installs it), initdb into a temporary folder
// and the server on a free loopback port. As root (CI) both run as the
// postgres user, or nobody: PostgreSQL refuses to run as root.
package pgtest

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"testing"
	"time"

	_ "github.com/lib/pq" // to wait for the server
)

// binDir finds the server's programs: Debian keeps them under
// /usr/lib/postgresql/VERSION/bin, the newest wins.
func binDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Strings(dirs)
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "initdb")); err == nil {
			return dirs[i], nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", fmt.Errorf("pgtest: PostgreSQL's initdb is not installed: apt-get install postgresql (as root), or run .ci/run")
}

// credential is who the server runs as: nil for the current user, else
// postgres (or nobody) when running as root.
func credential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
	}
	return nil, fmt.Errorf("pgtest: running as root, and neither postgres nor nobody exists to run the server as")
}

// Start starts a server for t and returns the URL of its database,
// stopped and removed when t ends.
func Start(t testing.TB) string {
	t.Helper()
	bin, err := binDir()
	if err != nil {
		t.Fatal(err)
	}
	cred, err := credential()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "gns-guard-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			t.Fatal(err)
		}
	}
	data := filepath.Join(dir, "data")
	run := func(name string, args ...string) *exec.Cmd {
		cmd := exec.Command(filepath.Join(bin, name), args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "LC_ALL=C", "TZ=UTC")
		if cred != nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		}
		return cmd
	}
	if out, err := run("initdb", "-D", data, "-U", "gns", "--auth=trust", "--no-sync", "-E", "UTF8").CombinedOutput(); err != nil {
		t.Fatalf("pgtest: initdb: %v\n%s", err, out)
	}
	port := freePort(t)
	srv := run("postgres", "-D", data, "-p", strconv.Itoa(port), "-k", dir, "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "max_connections=200")
	logf, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	srv.Stdout, srv.Stderr = logf, logf
	if err := srv.Start(); err != nil {
		t.Fatalf("pgtest: start postgres: %v", err)
	}
	t.Cleanup(func() {
		_ = srv.Process.Signal(syscall.SIGINT) // fast shutdown
		done := make(chan struct{})
		go func() { _ = srv.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = srv.Process.Kill()
		}
	})
	url := fmt.Sprintf("postgres://gns@127.0.0.1:%d/postgres?sslmode=disable", port)
	wait(t, url, filepath.Join(dir, "server.log"))
	return url
}

// wait waits for the server to take connections.
func wait(t testing.TB, url, log string) {
	t.Helper()
	db, err := sql.Open("postgres", url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err := db.PingContext(ctx)
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(log)
			t.Fatalf("pgtest: the server did not start: %v\n%s", err, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Require is Start, or a skip saying how to run the test when neither
// GNS_GUARD_INTEGRATION=1 nor CI is set (as the real-Gitea tests).
func Require(t testing.TB) string {
	t.Helper()
	if os.Getenv("GNS_GUARD_INTEGRATION") != "1" && os.Getenv("CI") == "" {
		t.Skip("PostgreSQL tests need a real server: GNS_GUARD_INTEGRATION=1 go test ... starts one (Debian's postgresql)")
	}
	return Start(t)
}
