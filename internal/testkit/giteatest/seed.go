package giteatest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// SeedIssue creates a fresh repository owned by the administrator (a README
// on branch main, like NewRepo) holding one open issue, number 1, with the
// title, body and comments given, all posted by the administrator. It goes
// through Gitea's own `gitea restore-repo`, which inserts the comments in
// one batch: thousands take about a second, where the API needs minutes
// (Gitea 1.26 with Actions on reloads every comment of the issue for each
// new one). The comments are dated one second apart, the last one an hour
// ago, so comments added later through the API sort after them; the issue
// and its comments are ordinary rows (type "comment" in the timeline,
// counted in the issue's comment count). It fails the test on error.
func (s *Server) SeedIssue(t testing.TB, title, body string, comments []string) (owner, name string, number int64) {
	t.Helper()
	return s.SeedIssueEvents(t, title, body, comments, 0)
}

// SeedIssueEvents is SeedIssue with events label entries after the
// comments in the timeline, dated one second apart like them (the last
// entry an hour ago): entries of type "label" that name no label (Gitea's
// migration stores none), which take their place in the timeline as label
// events do and are not counted as comments. 20,000 take a few seconds,
// where the API needs a request each.
func (s *Server) SeedIssueEvents(t testing.TB, title, body string, comments []string, events int) (owner, name string, number int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	owner, name = s.AdminLogin, s.repoName(t)
	if err := s.seedIssue(ctx, owner, name, title, body, comments, events); err != nil {
		t.Fatalf("giteatest: seeding %s/%s: %v\n%s", owner, name, err, s.LogTail())
	}
	return owner, name, 1
}

func (s *Server) seedIssue(ctx context.Context, owner, name, title, body string, comments []string, events int) error {
	var me struct {
		ID    int64  `json:"id"`
		Login string `json:"login"`
	}
	if err := s.api(ctx, http.MethodGet, "/user", s.AdminToken, nil, &me); err != nil {
		return err
	}
	dir, err := os.MkdirTemp(s.workDir, "seed-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := initBareRepo(ctx, filepath.Join(dir, "git"), name); err != nil {
		return err
	}

	end := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	first := end.Add(-time.Duration(len(comments)+events) * time.Second)
	stamp := func(t time.Time) string { return t.Format(time.RFC3339) }
	// restore-repo reads YAML; JSON is YAML, and needs no YAML library here.
	files := map[string]any{
		"repo.yml": map[string]string{
			"name":           name,
			"owner":          owner,
			"description":    "",
			"is_private":     "false",
			"original_url":   s.URL + "/" + owner + "/" + name, // same server: posters map to local users
			"service_type":   "3",                              // Gitea
			"default_branch": "main",
		},
		"issue.yml": []map[string]any{{
			"number":      1,
			"poster_id":   me.ID,
			"poster_name": me.Login,
			"title":       title,
			"content":     body,
			"state":       "open",
			"created":     stamp(first.Add(-time.Second)),
			"updated":     stamp(end),
		}},
	}
	list := make([]map[string]any, len(comments))
	for i, c := range comments {
		at := stamp(first.Add(time.Duration(i) * time.Second))
		list[i] = map[string]any{
			"issue_index":  1,
			"index":        i + 1,
			"comment_type": "comment",
			"poster_id":    me.ID,
			"poster_name":  me.Login,
			"created":      at,
			"updated":      at,
			"content":      c,
		}
	}
	for i := range events {
		at := stamp(first.Add(time.Duration(len(comments)+i) * time.Second))
		list = append(list, map[string]any{
			"issue_index":  1,
			"index":        len(comments) + i + 1,
			"comment_type": "label",
			"poster_id":    me.ID,
			"poster_name":  me.Login,
			"created":      at,
			"updated":      at,
			"content":      "1",
		})
	}
	files[filepath.Join("comments", "1.yml")] = list
	if err := os.MkdirAll(filepath.Join(dir, "comments"), 0o755); err != nil {
		return err
	}
	for file, v := range files {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, file), b, 0o644); err != nil {
			return err
		}
	}
	out, err := s.Gitea(ctx, "restore-repo", "--repo_dir", dir, "--owner_name", owner, "--repo_name", name, "--units", "issues,comments")
	if err != nil {
		return fmt.Errorf("gitea restore-repo: %w: %s", err, out)
	}
	return nil
}

// initBareRepo makes a bare repository with one commit on main adding a
// README, with git plumbing only (no user configuration involved).
func initBareRepo(ctx context.Context, gitDir, name string) error {
	home := filepath.Join(filepath.Dir(gitDir), "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return err
	}
	env := append(os.Environ(),
		"HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_AUTHOR_NAME=giteatest", "GIT_AUTHOR_EMAIL=giteatest@example.invalid",
		"GIT_COMMITTER_NAME=giteatest", "GIT_COMMITTER_EMAIL=giteatest@example.invalid",
	)
	git := func(stdin string, args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Env = env
		cmd.Stdin = strings.NewReader(stdin)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(stderr.Bytes()))
		}
		return strings.TrimSpace(string(out)), nil
	}
	if _, err := git("", "init", "--bare", "--quiet", gitDir); err != nil {
		return err
	}
	gd := "--git-dir=" + gitDir
	blob, err := git("# "+name+"\n", gd, "hash-object", "-w", "--stdin")
	if err != nil {
		return err
	}
	tree, err := git("100644 blob "+blob+"\tREADME.md\n", gd, "mktree")
	if err != nil {
		return err
	}
	commit, err := git("", gd, "commit-tree", tree, "-m", "Initial commit")
	if err != nil {
		return err
	}
	if _, err := git("", gd, "update-ref", "refs/heads/main", commit); err != nil {
		return err
	}
	_, err = git("", gd, "symbolic-ref", "HEAD", "refs/heads/main")
	return err
}
