package containertest

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/gns-guard/gns-guard/internal/testkit"
	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// ProjectFiles lists the files of the working tree that git tracks or would
// track (not ignored), relative to the repository's root: what a clone of
// the project holds, uncommitted changes included.
func ProjectFiles(ctx context.Context) (root string, files []string, err error) {
	root, err = testkit.Root()
	if err != nil {
		return "", nil, err
	}
	cmd := exec.CommandContext(ctx, "git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return "", nil, fmt.Errorf("containertest: git ls-files: %w", err)
	}
	for _, f := range strings.Split(string(out), "\x00") {
		if f == "" {
			continue
		}
		if fi, err := os.Lstat(filepath.Join(root, f)); err != nil || !fi.Mode().IsRegular() {
			continue // deleted in the working tree, or not a file
		}
		files = append(files, f)
	}
	return root, files, nil
}

// contextTar writes the project's files as a build context.
func contextTar(ctx context.Context, w io.Writer) error {
	root, files, err := ProjectFiles(ctx)
	if err != nil {
		return err
	}
	r := &rootfs{tw: tar.NewWriter(w), seen: map[string]bool{}}
	for _, f := range files {
		if err := r.hostFile(filepath.Join(root, f), f); err != nil {
			return err
		}
	}
	return r.tw.Close()
}

// Build builds the project's Dockerfile, unmodified, with the legacy
// builder into the image tag and returns how long it took. The context is
// the project's files (ProjectFiles), as a runner's clone holds them.
func (e *Engine) Build(ctx context.Context, tag string) (time.Duration, error) {
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(contextTar(ctx, pw)) }()
	began := time.Now()
	out, err := e.Docker(ctx, pr, "build", "--rm", "-t", tag, "-")
	pr.Close()
	if err != nil {
		return 0, fmt.Errorf("containertest: %w\n%s", err, tailString(out, 3000))
	}
	return time.Since(began), nil
}

func tailString(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// PushProject creates the public repository owner/name on the server
// (owner must be the administrator) and pushes the project's files to its
// branch main as one commit, tagged with each tag: a runner resolves
// `uses: owner/name@tag` against it when the server's DEFAULT_ACTIONS_URL
// is self. It returns the commit's id.
func PushProject(ctx context.Context, s *giteatest.Server, owner, name string, tags ...string) (string, error) {
	return PushEditedProject(ctx, s, owner, name, nil, tags...)
}

// PushEditedProject is PushProject with edit run on the copy of the
// project's files before they are committed (edit may be nil).
func PushEditedProject(ctx context.Context, s *giteatest.Server, owner, name string, edit func(dir string) error, tags ...string) (string, error) {
	if err := CreateRepo(ctx, s, owner, name); err != nil {
		return "", err
	}
	return PushFiles(ctx, s, owner, name, edit, tags...)
}

// CreateRepo creates the empty public repository owner/name on the server
// (owner must be the administrator), for PushFiles.
func CreateRepo(ctx context.Context, s *giteatest.Server, owner, name string) error {
	if owner != s.AdminLogin {
		return fmt.Errorf("containertest: CreateRepo creates repositories of the administrator %s, not %s", s.AdminLogin, owner)
	}
	body := map[string]any{"name": name, "auto_init": false, "default_branch": "main", "private": false}
	if err := s.API(ctx, s.AdminToken, http.MethodPost, "/user/repos", body, nil); err != nil {
		return fmt.Errorf("containertest: creating %s/%s: %w", owner, name, err)
	}
	return nil
}

// PushFiles pushes the project's files, edited by edit (may be nil), to
// the branch main of the empty repository owner/name as one commit, tagged
// with each tag, and returns the commit's id.
func PushFiles(ctx context.Context, s *giteatest.Server, owner, name string, edit func(dir string) error, tags ...string) (string, error) {
	if owner != s.AdminLogin {
		return "", fmt.Errorf("containertest: PushFiles pushes as the administrator %s, not %s", s.AdminLogin, owner)
	}
	root, files, err := ProjectFiles(ctx)
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "gnsg-project-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	if err := copyFiles(root, files, dir); err != nil {
		return "", err
	}
	if edit != nil {
		if err := edit(dir); err != nil {
			return "", err
		}
	}
	u, err := url.Parse(s.URL)
	if err != nil {
		return "", err
	}
	remote := u.JoinPath(owner, name+".git").String()
	auth := "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(s.AdminLogin+":"+s.AdminToken))
	git := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(),
			"HOME="+dir, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "GIT_TERMINAL_PROMPT=0",
			"GIT_AUTHOR_NAME=gns-guard", "GIT_AUTHOR_EMAIL=gns-guard@example.invalid",
			"GIT_COMMITTER_NAME=gns-guard", "GIT_COMMITTER_EMAIL=gns-guard@example.invalid")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("git %s: %w: %s", args[0], err, bytes.TrimSpace(stderr.Bytes()))
		}
		return strings.TrimSpace(string(out)), nil
	}
	steps := [][]string{
		{"init", "--quiet", "--initial-branch=main"},
		{"add", "--all"},
		{"commit", "--quiet", "--message", "gns-guard from the working tree under test"},
	}
	for _, tag := range tags {
		steps = append(steps, []string{"tag", tag})
	}
	steps = append(steps, []string{"-c", "http.extraHeader=" + auth, "push", "--quiet", remote, "refs/heads/main:refs/heads/main"})
	if len(tags) > 0 {
		steps = append(steps, []string{"-c", "http.extraHeader=" + auth, "push", "--quiet", "--tags", remote})
	}
	for _, args := range steps {
		if _, err := git(args...); err != nil {
			return "", fmt.Errorf("containertest: pushing the project to %s: %w", remote, err)
		}
	}
	return git("rev-parse", "HEAD")
}

// copyFiles copies the files (relative to root) into dir.
func copyFiles(root string, files []string, dir string) error {
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			return err
		}
		fi, err := os.Stat(filepath.Join(root, f))
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, b, fi.Mode().Perm()); err != nil {
			return err
		}
	}
	return nil
}

// WithoutWorkflows is an edit for PushEditedProject and PushFiles: it
// removes the project's own workflows (its CI, its release), which would
// otherwise run on the test runner for the pushed branch and tags.
func WithoutWorkflows(dir string) error {
	return os.RemoveAll(filepath.Join(dir, ".gitea", "workflows"))
}

// CheckoutProject copies the project's files (ProjectFiles) into dir, as a
// checkout of the working tree.
func CheckoutProject(ctx context.Context, dir string) error {
	root, files, err := ProjectFiles(ctx)
	if err != nil {
		return err
	}
	return copyFiles(root, files, dir)
}
