package forge_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/forge"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/port"
	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// The requests that set a repository up, on a real Gitea: the repository,
// labels, files on a branch, a commit of several files on a new branch and
// onto it, and the pull request that proposes them.
func TestSetup(t *testing.T) {
	f := newFixture(t)
	ctx := ctxT(t)
	fc := f.fc

	info, err := fc.Repository(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.ID <= 0 || info.DefaultBranch != "main" || info.FullName != f.owner+"/"+f.repo || !info.CanPush || info.Empty || info.Archived ||
		info.HTMLURL != f.srv.URL+"/"+f.owner+"/"+f.repo {
		t.Errorf("repository %+v", info)
	}

	// Labels.
	spec := issues.LabelSpec{Name: "size::small", Color: "8fdb8f", Description: "a small task"}
	created, err := fc.CreateLabel(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	labels, err := fc.Labels(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(labels) != 1 || labels[0] != created || created.ID == 0 || created.Name != spec.Name || created.Color != spec.Color || created.Description != spec.Description {
		t.Errorf("created %+v, listed %+v", created, labels)
	}

	// Files: missing, then committed on a new branch, then updated there.
	const path = ".gitea/gns-guard.yml"
	if _, err := fc.FileAt(ctx, "main", path, 1<<10); !errors.Is(err, issues.ErrNotFound) {
		t.Errorf("a missing file: %v", err)
	}
	if ok, err := fc.BranchExists(ctx, "setup"); ok || err != nil {
		t.Errorf("a missing branch: %v, %v", ok, err)
	}
	if _, err := fc.FileAt(ctx, "setup", path, 1<<10); !errors.Is(err, issues.ErrNotFound) {
		t.Errorf("a file of a missing branch: %v", err)
	}
	sha, err := fc.CommitFiles(ctx, port.Commit{Branch: "main", NewBranch: "setup", Message: "Add two files", Files: []port.FileChange{
		{Path: path, Content: []byte("history-tail: 3\n")},
		{Path: ".gitea/ISSUE_TEMPLATE/task.md", Content: []byte("---\nname: t\nabout: a\n---\nbody\n")},
	}})
	if err != nil || len(sha) != 40 {
		t.Fatalf("commit %q: %v", sha, err)
	}
	if ok, err := fc.BranchExists(ctx, "setup"); !ok || err != nil {
		t.Errorf("the new branch: %v, %v", ok, err)
	}
	if _, err := fc.FileAt(ctx, "main", path, 1<<10); !errors.Is(err, issues.ErrNotFound) {
		t.Errorf("the commit reached main: %v", err)
	}
	got, err := fc.FileAt(ctx, "setup", path, 1<<10)
	if err != nil || string(got.Content) != "history-tail: 3\n" || got.SHA == "" || got.Path != path {
		t.Fatalf("%+v, %v", got, err)
	}
	if _, err := fc.FileAt(ctx, "setup", path, 4); !errors.Is(err, issues.ErrTooLarge) {
		t.Errorf("over max: %v", err)
	}
	if _, err := fc.FileAt(ctx, "setup", ".gitea", 1<<10); err == nil || errors.Is(err, issues.ErrNotFound) {
		t.Errorf("a directory: %v", err)
	}
	if _, err := fc.CommitFiles(ctx, port.Commit{Branch: "setup", Message: "Edit", Files: []port.FileChange{{Path: path, Content: []byte("history-tail: 4\n"), SHA: got.SHA}}}); err != nil {
		t.Fatal(err)
	}
	if now, err := fc.FileAt(ctx, "setup", path, 1<<10); err != nil || string(now.Content) != "history-tail: 4\n" {
		t.Errorf("after the update: %q, %v", now.Content, err)
	}
	// An update from a stale blob, or a create over a file, is refused.
	if _, err := fc.CommitFiles(ctx, port.Commit{Branch: "setup", Files: []port.FileChange{{Path: path, Content: []byte("x"), SHA: got.SHA}}}); err == nil {
		t.Error("an update from a stale blob was accepted")
	}
	if _, err := fc.CommitFiles(ctx, port.Commit{Branch: "setup", Files: []port.FileChange{{Path: path, Content: []byte("x")}}}); err == nil {
		t.Error("a create over an existing file was accepted")
	}
	if _, err := fc.CommitFiles(ctx, port.Commit{Branch: "setup"}); err == nil {
		t.Error("an empty commit was accepted")
	}

	// The pull request.
	if _, open, err := fc.OpenPull(ctx, "setup", "main"); open || err != nil {
		t.Errorf("before: open %v, %v", open, err)
	}
	pr, err := fc.CreatePull(ctx, "setup", "main", "Set up", "Adds two files.")
	if err != nil {
		t.Fatal(err)
	}
	if pr.Number == 0 || pr.Head != "setup" || pr.Base != "main" || pr.Title != "Set up" || !strings.HasSuffix(pr.HTMLURL, "/pulls/"+strconv.FormatInt(pr.Number, 10)) {
		t.Errorf("created %+v", pr)
	}
	found, open, err := fc.OpenPull(ctx, "setup", "main")
	if !open || err != nil || found != pr {
		t.Errorf("found %+v (open %v, %v), want %+v", found, open, err, pr)
	}
	if _, open, err := fc.OpenPull(ctx, "other", "main"); open || err != nil {
		t.Errorf("another head: open %v, %v", open, err)
	}
	if _, err := fc.CreatePull(ctx, "setup", "main", "Again", ""); err == nil {
		t.Error("a second pull request for the same branches was accepted")
	}
}

// A reader cannot push, and its writes are refused with ErrForbidden.
func TestSetupReadOnly(t *testing.T) {
	f := newFixture(t)
	ctx := ctxT(t)
	login := "setup-reader-" + f.repo
	if len(login) > 39 {
		login = login[:39]
	}
	token, err := f.srv.NewUser(ctx, login, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.srv.AddCollaborator(ctx, f.owner, f.repo, login, giteatest.PermRead); err != nil {
		t.Fatal(err)
	}
	rc, err := forge.New(f.srv.URL, token, f.owner, f.repo)
	if err != nil {
		t.Fatal(err)
	}
	info, err := rc.Repository(ctx)
	if err != nil || info.CanPush {
		t.Errorf("a reader: %+v, %v", info, err)
	}
	_, err = rc.CommitFiles(ctx, port.Commit{Branch: "main", Files: []port.FileChange{{Path: "a.txt", Content: []byte("a")}}})
	if !errors.Is(err, issues.ErrForbidden) {
		t.Errorf("a reader's commit: %v", err)
	}
	if _, err := rc.CreateLabel(ctx, issues.LabelSpec{Name: "x"}); !errors.Is(err, issues.ErrForbidden) {
		t.Errorf("a reader's label: %v", err)
	}
}
