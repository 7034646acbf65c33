// Package giteatest runs a real Gitea server for the project's integration
// tests. The server is Gitea 1.26.0, built once from the Go module proxy into
// a cache outside the repository (see BinaryPath), configured for SQLite in a
// throw-away directory, listening on a free loopback port. Nothing about it is
// mocked.
//
// A package opts in with
//
//	func TestMain(m *testing.M) { giteatest.Main(m) }
//
// and each test asks for the shared server with Require, which skips the test
// unless GNS_GUARD_INTEGRATION=1 or CI is set.
package giteatest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Server is a running Gitea. Its fields are read-only.
type Server struct {
	// URL is the server root without a trailing slash, e.g.
	// http://127.0.0.1:41234; the API is under URL+"/api/v1".
	URL string
	// AdminLogin is the login of the site administrator created at start.
	AdminLogin string
	// AdminToken is an access token of AdminLogin with all scopes.
	AdminToken string

	bin     string // Gitea binary
	workDir string // throw-away work path: config, database, repositories, logs
	config  string // app.ini
	outPath string // the web process's stdout and stderr

	cmd  *exec.Cmd
	done chan struct{} // closed when the web process has exited
	werr error         // its exit status, valid after done

	http     *http.Client
	seq      atomic.Int64
	stopOnce sync.Once
	stopErr  error
}

// Permission is a collaborator's access level on a repository.
type Permission string

// Collaborator permissions accepted by AddCollaborator.
const (
	PermRead  Permission = "read"
	PermWrite Permission = "write"
	PermAdmin Permission = "admin"
)

const (
	startTimeout = 2 * time.Minute // from exec to /api/v1/version answering
	stopTimeout  = 10 * time.Second
	workPrefix   = "giteatest-"
	ownerFile    = "owner.pid"
)

// Start starts a fresh Gitea with an empty database: it builds the binary
// if needed (BinaryPath), writes the configuration, migrates the database,
// creates an administrator and their token, starts `gitea web` in its own
// process group and waits until /api/v1/version answers. The caller must
// Stop it; if the calling process dies, the kernel kills Gitea
// (Pdeathsig).
func Start(ctx context.Context) (*Server, error) {
	bin, err := BinaryPath(ctx)
	if err != nil {
		return nil, err
	}
	modDir, err := ModuleDir(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := exec.LookPath("git"); err != nil {
		return nil, fmt.Errorf("giteatest: Gitea needs git on PATH: %w", err)
	}
	removeStaleWorkDirs()

	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		s, err := start(ctx, bin, modDir)
		if err == nil {
			return s, nil
		}
		lastErr = err
		// Another process may have taken the free port between our probe and
		// Gitea's listen: try again with a new one.
		if !strings.Contains(err.Error(), "address already in use") || ctx.Err() != nil {
			break
		}
	}
	return nil, lastErr
}

func start(ctx context.Context, bin, modDir string) (_ *Server, err error) {
	work, err := os.MkdirTemp(workParent(), workPrefix+"*")
	if err != nil {
		return nil, fmt.Errorf("giteatest: %w", err)
	}
	s := &Server{
		bin:        bin,
		workDir:    work,
		config:     filepath.Join(work, "app.ini"),
		outPath:    filepath.Join(work, "web.out"),
		AdminLogin: "gnsadmin",
		http:       &http.Client{Timeout: 60 * time.Second},
	}
	defer func() {
		if err != nil {
			tail := s.LogTail()
			_ = s.Stop()
			if tail != "" {
				err = fmt.Errorf("%w\n--- Gitea log tail ---\n%s", err, tail)
			}
		}
	}()
	if err := os.WriteFile(filepath.Join(work, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return s, fmt.Errorf("giteatest: %w", err)
	}
	port, err := freePort()
	if err != nil {
		return s, err
	}
	s.URL = "http://127.0.0.1:" + strconv.Itoa(port)
	if err := os.WriteFile(s.config, []byte(appINI(work, modDir, port)), 0o600); err != nil {
		return s, fmt.Errorf("giteatest: %w", err)
	}

	if out, err := s.Gitea(ctx, "migrate"); err != nil {
		return s, fmt.Errorf("giteatest: gitea migrate: %w: %s", err, out)
	}
	password := randomHex(16)
	if out, err := s.Gitea(ctx, "admin", "user", "create",
		"--username", s.AdminLogin, "--password", password,
		"--email", s.AdminLogin+"@example.invalid",
		"--admin", "--must-change-password=false"); err != nil {
		return s, fmt.Errorf("giteatest: gitea admin user create: %w: %s", err, out)
	}
	if err := s.startWeb(ctx); err != nil {
		return s, err
	}
	// The token comes from the API, not from generate-access-token: that
	// command prints it on stdout among Gitea's asynchronous console log.
	if s.AdminToken, err = s.createToken(ctx, s.AdminLogin, password); err != nil {
		return s, err
	}
	return s, nil
}

// startWeb runs `gitea web` and waits for the API to answer.
func (s *Server) startWeb(ctx context.Context) error {
	outFile, err := os.Create(s.outPath)
	if err != nil {
		return fmt.Errorf("giteatest: %w", err)
	}
	defer outFile.Close() // the child keeps its own descriptor

	cmd := exec.Command(s.bin, "web", "--config", s.config, "--work-path", s.workDir)
	cmd.Dir = s.workDir
	cmd.Env = giteaEnv()
	cmd.Stdout = outFile
	cmd.Stderr = outFile
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Setpgid:   true,            // its own process group: Stop signals Gitea and its git children
		Pdeathsig: syscall.SIGKILL, // a crashed test process does not leave Gitea running
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("giteatest: starting gitea web: %w", err)
	}
	s.cmd = cmd
	s.done = make(chan struct{})
	go func() {
		s.werr = cmd.Wait()
		close(s.done)
	}()

	deadline := time.NewTimer(startTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	probe := &http.Client{Timeout: 2 * time.Second}
	for {
		select {
		case <-s.done:
			return fmt.Errorf("giteatest: gitea web exited during start-up: %v", s.werr)
		case <-ctx.Done():
			return fmt.Errorf("giteatest: waiting for Gitea to start: %w", ctx.Err())
		case <-deadline.C:
			return fmt.Errorf("giteatest: Gitea did not answer %s/api/v1/version within %s", s.URL, startTimeout)
		case <-tick.C:
			if s.versionAnswers(ctx, probe) {
				return nil
			}
		}
	}
}

func (s *Server) versionAnswers(ctx context.Context, c *http.Client) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/api/v1/version", nil)
	if err != nil {
		return false
	}
	resp, err := c.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var v struct {
		Version string `json:"version"`
	}
	return resp.StatusCode == http.StatusOK && json.NewDecoder(resp.Body).Decode(&v) == nil && v.Version != ""
}

// Stop stops Gitea (SIGTERM to its process group, SIGKILL after a grace
// period) and removes its work directory. It is safe to call more than once.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		if s.cmd != nil && s.cmd.Process != nil {
			pgid := s.cmd.Process.Pid
			_ = syscall.Kill(-pgid, syscall.SIGTERM)
			select {
			case <-s.done:
			case <-time.After(stopTimeout):
				_ = syscall.Kill(-pgid, syscall.SIGKILL)
				<-s.done
			}
			// git children that outlived Gitea
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
		if s.workDir != "" {
			if err := os.RemoveAll(s.workDir); err != nil {
				s.stopErr = fmt.Errorf("giteatest: removing %s: %w", s.workDir, err)
			}
		}
	})
	return s.stopErr
}

// Gitea runs the Gitea command line against this server's configuration and
// work path (the flags are appended to args) and returns its combined output.
// Example: s.Gitea(ctx, "admin", "user", "list").
func (s *Server) Gitea(ctx context.Context, args ...string) ([]byte, error) {
	full := append(append([]string{}, args...), "--config", s.config, "--work-path", s.workDir)
	cmd := exec.CommandContext(ctx, s.bin, full...)
	cmd.Dir = s.workDir
	cmd.Env = giteaEnv()
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.CombinedOutput()
	return stripRootWarning(out), err
}

// DatabasePath is the file of the server's SQLite database. A test may
// read it to see what the API does not show, such as the event payload of
// a recorded workflow run; Gitea writes it meanwhile (WAL journal), so open
// it read-only and with a busy timeout.
func (s *Server) DatabasePath() string { return databasePath(s.workDir) }

func databasePath(work string) string { return filepath.Join(work, "data", "gitea.db") }

// LogTail returns the end of Gitea's log file and of the web process's
// output, for failure messages.
func (s *Server) LogTail() string {
	if s == nil || s.workDir == "" {
		return ""
	}
	var b strings.Builder
	if t := tailOfFile(filepath.Join(s.workDir, "log", "gitea.log"), 3072); t != "" {
		b.WriteString("[log/gitea.log]\n")
		b.WriteString(t)
	}
	if t := tailOfFile(s.outPath, 2048); t != "" {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		b.WriteString("[gitea web output]\n")
		b.WriteString(t)
	}
	return b.String()
}

// NewUser creates a user (a site administrator if admin) and returns an
// access token of theirs with all scopes.
func (s *Server) NewUser(ctx context.Context, login string, admin bool) (token string, err error) {
	password := randomHex(16)
	create := map[string]any{
		"username":             login,
		"email":                login + "@example.invalid",
		"password":             password,
		"must_change_password": false,
	}
	if err := s.api(ctx, http.MethodPost, "/admin/users", s.AdminToken, create, nil); err != nil {
		return "", fmt.Errorf("giteatest: creating user %s: %w", login, err)
	}
	if admin {
		edit := map[string]any{"source_id": 0, "login_name": login, "admin": true}
		if err := s.api(ctx, http.MethodPatch, "/admin/users/"+url.PathEscape(login), s.AdminToken, edit, nil); err != nil {
			return "", fmt.Errorf("giteatest: making %s an administrator: %w", login, err)
		}
	}
	return s.createToken(ctx, login, password)
}

// NewUserScoped creates a user who is no administrator and returns one
// access token of theirs per list of scopes (Gitea's, e.g. read:issue).
func (s *Server) NewUserScoped(ctx context.Context, login string, scopes ...[]string) ([]string, error) {
	password := randomHex(16)
	create := map[string]any{"username": login, "email": login + "@example.invalid", "password": password, "must_change_password": false}
	if err := s.api(ctx, http.MethodPost, "/admin/users", s.AdminToken, create, nil); err != nil {
		return nil, fmt.Errorf("giteatest: creating user %s: %w", login, err)
	}
	var out []string
	for _, sc := range scopes {
		tok, err := s.createToken(ctx, login, password, sc...)
		if err != nil {
			return nil, err
		}
		out = append(out, tok)
	}
	return out, nil
}

// createToken signs in as login with password and creates an access token
// with the scopes given (none: all scopes).
func (s *Server) createToken(ctx context.Context, login, password string, scopes ...string) (string, error) {
	var tok struct {
		SHA1 string `json:"sha1"`
	}
	if len(scopes) == 0 {
		scopes = []string{"all"}
	}
	body := map[string]any{"name": "giteatest-" + randomHex(4), "scopes": scopes}
	if err := s.apiBasic(ctx, http.MethodPost, "/users/"+url.PathEscape(login)+"/tokens", login, password, body, &tok); err != nil {
		return "", fmt.Errorf("giteatest: creating a token for %s: %w", login, err)
	}
	if tok.SHA1 == "" {
		return "", fmt.Errorf("giteatest: creating a token for %s: empty token in the answer", login)
	}
	return tok.SHA1, nil
}

var unsafeRepoChars = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// NewRepo creates a fresh public repository owned by the administrator,
// initialised with a README on branch main, under a name unique on this
// server and derived from the test's name. It fails the test on error.
func (s *Server) NewRepo(t testing.TB) (owner, name string) {
	t.Helper()
	name = s.repoName(t)
	body := map[string]any{
		"name":           name,
		"auto_init":      true,
		"default_branch": "main",
		"readme":         "Default",
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var repo struct {
		Name  string `json:"name"`
		Owner struct {
			Login string `json:"login"`
		} `json:"owner"`
	}
	if err := s.api(ctx, http.MethodPost, "/user/repos", s.AdminToken, body, &repo); err != nil {
		t.Fatalf("giteatest: creating repository %s: %v\n%s", name, err, s.LogTail())
	}
	return repo.Owner.Login, repo.Name
}

// repoName derives a repository name unique on this server from the test's.
func (s *Server) repoName(t testing.TB) string {
	base := strings.Trim(unsafeRepoChars.ReplaceAllString(t.Name(), "-"), "-.")
	if len(base) > 60 {
		base = base[:60]
	}
	if base == "" {
		base = "repo"
	}
	return fmt.Sprintf("%s-%d", base, s.seq.Add(1))
}

// AddCollaborator gives the user login the permission on owner/repo, so that
// tests can hold a token that is not the repository admin's.
func (s *Server) AddCollaborator(ctx context.Context, owner, repo, login string, perm Permission) error {
	path := "/repos/" + url.PathEscape(owner) + "/" + url.PathEscape(repo) + "/collaborators/" + url.PathEscape(login)
	if err := s.api(ctx, http.MethodPut, path, s.AdminToken, map[string]any{"permission": string(perm)}, nil); err != nil {
		return fmt.Errorf("giteatest: adding %s to %s/%s with %s: %w", login, owner, repo, perm, err)
	}
	return nil
}

// API sends a JSON request to /api/v1+path with token and decodes the JSON
// answer into out (if non-nil; a *string takes the answer as text). An answer other than 2xx is an error that
// names the request, the status and the server's message.
func (s *Server) API(ctx context.Context, token, method, path string, in, out any) error {
	return s.api(ctx, method, path, token, in, out)
}

// api sends a JSON request to /api/v1+path with a token and decodes a JSON
// answer into out (if non-nil).
func (s *Server) api(ctx context.Context, method, path, token string, in, out any) error {
	return s.do(ctx, method, path, func(r *http.Request) { r.Header.Set("Authorization", "token "+token) }, in, out)
}

func (s *Server) apiBasic(ctx context.Context, method, path, user, password string, in, out any) error {
	return s.do(ctx, method, path, func(r *http.Request) { r.SetBasicAuth(user, password) }, in, out)
}

func (s *Server) do(ctx context.Context, method, path string, auth func(*http.Request), in, out any) error {
	code, data, err := s.send(ctx, method, path, auth, in)
	if err != nil {
		return err
	}
	if code/100 != 2 {
		if len(data) > 1024 {
			data = data[:1024]
		}
		return fmt.Errorf("%s %s: HTTP %d: %s", method, path, code, bytes.TrimSpace(data))
	}
	switch o := out.(type) {
	case nil:
	case *string: // a text answer, such as a job's log
		*o = string(data)
	default:
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("%s %s: decoding the answer: %w", method, path, err)
		}
	}
	return nil
}

// Request sends a JSON request to /api/v1+path with token and returns
// the answer's status and body, whatever the status: for a test that
// asserts a refusal. An error means no answer came.
func (s *Server) Request(ctx context.Context, token, method, path string, in any) (status int, body []byte, err error) {
	return s.send(ctx, method, path, func(r *http.Request) { r.Header.Set("Authorization", "token "+token) }, in)
}

// send sends one request and reads the answer's status and body.
func (s *Server) send(ctx context.Context, method, path string, auth func(*http.Request), in any) (int, []byte, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return 0, nil, err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, s.URL+"/api/v1"+path, body)
	if err != nil {
		return 0, nil, err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	auth(req)
	resp, err := s.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return 0, nil, err
	}
	return resp.StatusCode, data, nil
}

// appINI is the server's configuration: SQLite, loopback only, offline,
// Actions on, webhooks allowed to loopback listeners, background work kept
// cheap.
func appINI(work, modDir string, port int) string {
	j := func(elem ...string) string { return filepath.Join(append([]string{work}, elem...)...) }
	return fmt.Sprintf(`I_AM_BEING_UNSAFE_RUNNING_AS_ROOT = true
APP_NAME = gns-guard test Gitea
RUN_MODE = prod
WORK_PATH = %[1]s

[server]
PROTOCOL = http
HTTP_ADDR = 127.0.0.1
HTTP_PORT = %[2]d
DOMAIN = 127.0.0.1
ROOT_URL = http://127.0.0.1:%[2]d/
OFFLINE_MODE = true
DISABLE_SSH = true
START_SSH_SERVER = false
LFS_START_SERVER = false
APP_DATA_PATH = %[3]s
STATIC_ROOT_PATH = %[4]s

[database]
DB_TYPE = sqlite3
PATH = %[5]s
SQLITE_JOURNAL_MODE = WAL
SQLITE_TIMEOUT = 20000
LOG_SQL = false

[repository]
ROOT = %[6]s
DEFAULT_BRANCH = main

[security]
INSTALL_LOCK = true
SECRET_KEY = %[7]s
INTERNAL_TOKEN = %[8]s
PASSWORD_CHECK_PWN = false
; Tests log in with passwords only to make tokens: a cheap hash.
PASSWORD_HASH_ALGO = pbkdf2$1000$50

; No search index to keep (the guard never searches issues by text), and
; queues in memory: the server's work on each event is what production
; does, less the disk.
[indexer]
ISSUE_INDEXER_TYPE = db

[queue]
TYPE = channel

[oauth2]
JWT_SECRET = %[9]s

[log]
MODE = file
LEVEL = Warn
ROOT_PATH = %[10]s

[mailer]
ENABLED = false

[service]
DISABLE_REGISTRATION = true
ENABLE_NOTIFY_MAIL = false
DEFAULT_KEEP_EMAIL_PRIVATE = true

[actions]
ENABLED = true
; uses: owner/name@ref resolves on this server: it is offline, and the
; container tests push the action here.
DEFAULT_ACTIONS_URL = self

[webhook]
ALLOWED_HOST_LIST = loopback
DELIVER_TIMEOUT = 10

[indexer]
ISSUE_INDEXER_TYPE = db
REPO_INDEXER_ENABLED = false

; The db indexer searches the database directly: its update queue would only
; reload every comment of an issue on each new comment, for nothing.
[queue.issue_indexer]
TYPE = dummy

[session]
PROVIDER = memory

[cache]
ADAPTER = memory

; No scheduled job is due within a test; the update checker would go online.
[cron.update_checker]
ENABLED = false

[other]
SHOW_FOOTER_VERSION = false
`, work, port, j("data"), modDir, databasePath(work), j("repos"),
		randomHex(32), randomHex(32), base64.RawURLEncoding.EncodeToString(randomBytes(32)), j("log"))
}

// giteaEnv is the environment for Gitea processes: the test's environment
// without GITEA_* variables (a CI runner's could redirect Gitea's work path,
// custom path or run mode). Gitea gives git its own HOME under APP_DATA_PATH.
func giteaEnv() []string {
	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GITEA_") {
			env = append(env, kv)
		}
	}
	return env
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("giteatest: finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// ramDisk holds the servers' work directories when it has room (see
// workParent).
const ramDisk = "/dev/shm"

// minRAMDisk is the free space ramDisk needs to be used: a container's
// /dev/shm is often 64 MiB, too small for a server's repositories.
const minRAMDisk = 2 << 30

// workParent is where servers keep their work directories: the RAM disk
// when it has room, so that SQLite's commits wait on no disk (with
// parallel tests, every writer waits on the one who commits), else the
// temporary directory.
func workParent() string {
	var st syscall.Statfs_t
	if err := syscall.Statfs(ramDisk, &st); err == nil && st.Bavail*uint64(st.Bsize) >= minRAMDisk && syscall.Access(ramDisk, 2) == nil {
		return ramDisk
	}
	return os.TempDir()
}

// removeStaleWorkDirs deletes work directories left by test processes that
// died without stopping their server (their Gitea died with them).
func removeStaleWorkDirs() {
	var matches []string
	for _, parent := range []string{os.TempDir(), ramDisk} {
		m, _ := filepath.Glob(filepath.Join(parent, workPrefix+"*"))
		matches = append(matches, m...)
	}
	for _, dir := range matches {
		b, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue // not ours, or being created right now
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			_ = os.RemoveAll(dir)
		}
	}
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return b
}

func randomHex(n int) string { return hex.EncodeToString(randomBytes(n)) }

// stripRootWarning drops the warning Gitea logs on every command when run as
// root with I_AM_BEING_UNSAFE_RUNNING_AS_ROOT.
func stripRootWarning(out []byte) []byte {
	if !bytes.Contains(out, []byte("running Gitea using the root user")) {
		return out
	}
	var keep [][]byte
	for _, l := range bytes.SplitAfter(out, []byte("\n")) {
		if !bytes.Contains(l, []byte("running Gitea using the root user")) {
			keep = append(keep, l)
		}
	}
	return bytes.Join(keep, nil)
}
