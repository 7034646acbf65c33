package giteatest

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
)

// WorkflowRun is a workflow run as the API lists it.
type WorkflowRun struct {
	ID         int64  `json:"id"`
	Title      string `json:"display_title"`
	Event      string `json:"event"`
	Status     string `json:"status"`
	Conclusion string `json:"conclusion"`
}

func (r WorkflowRun) String() string {
	return fmt.Sprintf("run %d %q: %s %s", r.ID, r.Title, r.Status, r.Conclusion)
}

// RunList renders runs one a line, for test failures.
func RunList(runs []WorkflowRun) string {
	if len(runs) == 0 {
		return "  (none)"
	}
	var b strings.Builder
	for _, run := range runs {
		b.WriteString("  " + run.String() + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

func repoPath(owner, repo string) string {
	return "/repos/" + url.PathEscape(owner) + "/" + url.PathEscape(repo)
}

// WorkflowRuns lists every workflow run of owner/repo, oldest first, as
// the administrator.
func (s *Server) WorkflowRuns(ctx context.Context, owner, repo string) ([]WorkflowRun, error) {
	var all []WorkflowRun
	for page := 1; ; page++ {
		var resp struct {
			Runs  []WorkflowRun `json:"workflow_runs"`
			Total int           `json:"total_count"`
		}
		if err := s.API(ctx, s.AdminToken, http.MethodGet, repoPath(owner, repo)+fmt.Sprintf("/actions/runs?limit=50&page=%d", page), nil, &resp); err != nil {
			return nil, err
		}
		all = append(all, resp.Runs...)
		if len(resp.Runs) == 0 || len(all) >= resp.Total {
			break
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].ID < all[j].ID })
	return all, nil
}

// JobLog returns the log of a run's single job, as the Actions tab shows
// it.
func (s *Server) JobLog(ctx context.Context, owner, repo string, run WorkflowRun) (string, error) {
	var jobs struct {
		Jobs []struct {
			ID int64 `json:"id"`
		} `json:"jobs"`
	}
	if err := s.API(ctx, s.AdminToken, http.MethodGet, repoPath(owner, repo)+fmt.Sprintf("/actions/runs/%d/jobs", run.ID), nil, &jobs); err != nil {
		return "", err
	}
	if len(jobs.Jobs) != 1 {
		return "", fmt.Errorf("giteatest: %s has %d jobs, want 1", run, len(jobs.Jobs))
	}
	var log string
	err := s.API(ctx, s.AdminToken, http.MethodGet, repoPath(owner, repo)+fmt.Sprintf("/actions/jobs/%d/logs", jobs.Jobs[0].ID), nil, &log)
	return log, err
}
