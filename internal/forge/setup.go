package forge

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"code.gitea.io/sdk/gitea"

	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/port"
)

// This file holds the requests that set a repository up for the guard
// (`gns-guard init`): the repository's default branch, its labels, files
// on a branch, one commit of several files, and the pull request that
// proposes them.

// Repository reads the repository: one GET.
func (c *Client) Repository(ctx context.Context) (port.Repository, error) {
	sc, err := c.sdk(ctx)
	if err != nil {
		return port.Repository{}, err
	}
	r, resp, err := sc.GetRepo(c.owner, c.repo)
	if err := c.sdkError(ctx, http.MethodGet, c.repoPath(), resp, err); err != nil {
		return port.Repository{}, err
	}
	out := port.Repository{
		ID:            r.ID,
		FullName:      r.FullName,
		HTMLURL:       r.HTMLURL,
		DefaultBranch: r.DefaultBranch,
		Empty:         r.Empty,
		Archived:      r.Archived,
	}
	if r.Permissions != nil {
		out.CanPush = r.Permissions.Push || r.Permissions.Admin
	}
	return out, nil
}

// Labels lists the repository's labels, 50 a request.
func (c *Client) Labels(ctx context.Context) ([]port.RepoLabel, error) {
	labels, err := c.repoLabels(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]port.RepoLabel, 0, len(labels))
	for _, l := range labels {
		if l != nil {
			out = append(out, port.RepoLabel{ID: l.ID, Name: l.Name, Color: strings.TrimPrefix(l.Color, "#"), Description: l.Description})
		}
	}
	return out, nil
}

// CreateLabel: one POST, DefaultLabelColor without a color. Gitea allows
// duplicate names; the caller checks first.
func (c *Client) CreateLabel(ctx context.Context, spec issues.LabelSpec) (port.RepoLabel, error) {
	sc, err := c.sdk(ctx)
	if err != nil {
		return port.RepoLabel{}, err
	}
	color := strings.TrimPrefix(spec.Color, "#")
	if color == "" {
		color = DefaultLabelColor
	}
	l, resp, err := sc.CreateLabel(c.owner, c.repo, gitea.CreateLabelOption{
		Name:        spec.Name,
		Color:       "#" + color,
		Description: spec.Description,
	})
	if err := c.sdkError(ctx, http.MethodPost, c.repoPath()+"/labels", resp, err); err != nil {
		return port.RepoLabel{}, fmt.Errorf("creating label %q: %w", spec.Name, err)
	}
	return port.RepoLabel{ID: l.ID, Name: l.Name, Color: strings.TrimPrefix(l.Color, "#"), Description: l.Description}, nil
}

// FileAt reads the file at path on ref (a branch, tag or commit; "" is the
// default branch) through the contents API: one GET. A missing file (or
// branch) is an error wrapping issues.ErrNotFound; a file over max bytes,
// one wrapping issues.ErrTooLarge; a directory is an error naming it.
func (c *Client) FileAt(ctx context.Context, ref, path string, max int64) (port.RepoFile, error) {
	sc, err := c.sdk(ctx)
	if err != nil {
		return port.RepoFile{}, err
	}
	shown := c.repoPath() + "/contents/" + path
	cr, resp, err := sc.GetContents(c.owner, c.repo, ref, path)
	if err := c.sdkError(ctx, http.MethodGet, shown, resp, err); err != nil {
		return port.RepoFile{}, err
	}
	if cr.Type != "file" {
		return port.RepoFile{}, fmt.Errorf("%s on %s is a %s, not a file", path, refName(ref), cr.Type)
	}
	if cr.Size > max {
		return port.RepoFile{}, fmt.Errorf("%s on %s is over %d bytes: %w", path, refName(ref), max, issues.ErrTooLarge)
	}
	var data []byte
	if cr.Content != nil {
		if cr.Encoding != nil && *cr.Encoding != "base64" {
			return port.RepoFile{}, fmt.Errorf("GET /api/v1%s: content encoded as %q, want base64", shown, *cr.Encoding)
		}
		if data, err = base64.StdEncoding.DecodeString(*cr.Content); err != nil {
			return port.RepoFile{}, fmt.Errorf("GET /api/v1%s: decoding the content: %w", shown, err)
		}
	}
	if int64(len(data)) != cr.Size {
		return port.RepoFile{}, fmt.Errorf("GET /api/v1%s: the answer holds %d of the file's %d bytes", shown, len(data), cr.Size)
	}
	return port.RepoFile{Path: cr.Path, Content: data, SHA: cr.SHA}, nil
}

func refName(ref string) string {
	if ref == "" {
		return "the default branch"
	}
	return ref
}

// BranchExists reports whether the branch exists: one GET.
func (c *Client) BranchExists(ctx context.Context, name string) (bool, error) {
	sc, err := c.sdk(ctx)
	if err != nil {
		return false, err
	}
	_, resp, err := sc.GetRepoBranch(c.owner, c.repo, name)
	err = c.sdkError(ctx, http.MethodGet, c.repoPath()+"/branches/"+url.PathEscape(name), resp, err)
	if errors.Is(err, issues.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// CommitFiles makes one commit (change-files, one POST) as the token's user;
// returns its id.
func (c *Client) CommitFiles(ctx context.Context, cm port.Commit) (string, error) {
	if len(cm.Files) == 0 {
		return "", errors.New("forge: a commit needs at least one file")
	}
	sc, err := c.sdk(ctx)
	if err != nil {
		return "", err
	}
	opt := gitea.ChangeFilesOptions{Message: cm.Message, Branch: cm.Branch, NewBranch: cm.NewBranch}
	for _, f := range cm.Files {
		op := "create"
		if f.SHA != "" {
			op = "update"
		}
		opt.Files = append(opt.Files, &gitea.ChangeFileOperation{
			Operation: op,
			Path:      f.Path,
			Content:   base64.StdEncoding.EncodeToString(f.Content),
			SHA:       f.SHA,
		})
	}
	fr, resp, err := sc.ChangeFiles(c.owner, c.repo, opt)
	if err := c.sdkError(ctx, http.MethodPost, c.repoPath()+"/contents", resp, err); err != nil {
		return "", err
	}
	if fr == nil || fr.Commit == nil {
		return "", nil
	}
	return fr.Commit.SHA, nil
}

// OpenPull finds head into base, 50 open pulls a request; false when none.
func (c *Client) OpenPull(ctx context.Context, head, base string) (port.Pull, bool, error) {
	sc, err := c.sdk(ctx)
	if err != nil {
		return port.Pull{}, false, err
	}
	for page := 1; page <= maxPages; page++ {
		prs, resp, err := sc.ListRepoPullRequests(c.owner, c.repo, gitea.ListPullRequestsOptions{
			ListOptions: gitea.ListOptions{Page: page, PageSize: PageSize},
			State:       gitea.StateOpen,
		})
		if err := c.sdkError(ctx, http.MethodGet, c.repoPath()+"/pulls", resp, err); err != nil {
			return port.Pull{}, false, err
		}
		for _, pr := range prs {
			if pr == nil || pr.Head == nil || pr.Base == nil || pr.Head.Ref != head || pr.Base.Ref != base {
				continue
			}
			if pr.Head.Repository != nil && !strings.EqualFold(pr.Head.Repository.FullName, c.owner+"/"+c.repo) {
				continue // the same branch name in a fork
			}
			return fromSDKPull(pr), true, nil
		}
		if len(prs) < PageSize {
			return port.Pull{}, false, nil
		}
	}
	return port.Pull{}, false, fmt.Errorf("forge: open pull requests of %s/%s: no end after %d pages", c.owner, c.repo, maxPages)
}

// CreatePull opens head into base, in this repository: one POST.
func (c *Client) CreatePull(ctx context.Context, head, base, title, body string) (port.Pull, error) {
	sc, err := c.sdk(ctx)
	if err != nil {
		return port.Pull{}, err
	}
	pr, resp, err := sc.CreatePullRequest(c.owner, c.repo, gitea.CreatePullRequestOption{Head: head, Base: base, Title: title, Body: body})
	if err := c.sdkError(ctx, http.MethodPost, c.repoPath()+"/pulls", resp, err); err != nil {
		return port.Pull{}, err
	}
	return fromSDKPull(pr), nil
}

func fromSDKPull(pr *gitea.PullRequest) port.Pull {
	p := port.Pull{Number: pr.Index, Title: pr.Title, HTMLURL: pr.HTMLURL}
	if pr.Head != nil {
		p.Head = pr.Head.Ref
	}
	if pr.Base != nil {
		p.Base = pr.Base.Ref
	}
	return p
}
