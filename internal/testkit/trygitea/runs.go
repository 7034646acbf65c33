package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// run is a workflow run as the API lists it.
type run struct {
	ID         int64  `json:"id"`
	Title      string `json:"display_title"`
	Status     string `json:"status"`
	Conclusion string `json:"conclusion"`
}

// settle is how long the runs must stay all done, and as many, before
// wait believes no event is still on its way to becoming a run.
const settle = 2 * time.Second

// wait waits until every workflow run of repo is done, and stays so for
// settle, then prints the runs it had not printed before (it keeps the
// last one printed in $TRY_DIR/seen). A run that failed is printed as
// such; wait fails only when the runs do not finish.
func (c client) wait(ctx context.Context, repo string) error {
	var stable time.Time
	last := -1
	for {
		runs, err := c.runs(ctx, repo)
		if err != nil {
			return err
		}
		done := true
		for _, r := range runs {
			done = done && r.Status == "completed"
		}
		switch {
		case !done || len(runs) != last:
			stable, last = time.Time{}, len(runs)
		case stable.IsZero():
			stable = time.Now()
		case time.Since(stable) >= settle:
			return printNew(runs)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the runs of %s did not finish: %w", repo, ctx.Err())
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// runs lists every run of repo, oldest first.
func (c client) runs(ctx context.Context, repo string) ([]run, error) {
	var all []run
	for page := 1; page < 100; page++ {
		var resp struct {
			Runs  []run `json:"workflow_runs"`
			Total int   `json:"total_count"`
		}
		if err := c.call(ctx, http.MethodGet, fmt.Sprintf("/repos/%s/actions/runs?limit=50&page=%d", repo, page), nil, &resp); err != nil {
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

// printNew prints the runs after the last one printed, and remembers it.
func printNew(runs []run) error {
	seenFile := ""
	var seen int64
	if dir := os.Getenv("TRY_DIR"); dir != "" {
		seenFile = filepath.Join(dir, "seen")
		if b, err := os.ReadFile(seenFile); err == nil {
			seen, _ = strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		}
	}
	for _, r := range runs {
		if r.ID <= seen {
			continue
		}
		fmt.Printf("  run %d  %-44s %s\n", r.ID, r.Title, r.Conclusion)
		seen = r.ID
	}
	if seenFile == "" {
		return nil
	}
	return os.WriteFile(seenFile, []byte(strconv.FormatInt(seen, 10)), 0o600)
}

// status prints the guard's status comment on issue n, without its hidden
// ledger record.
func (c client) status(ctx context.Context, repo, n string) error {
	var comments []struct {
		Body string `json:"body"`
	}
	if err := c.call(ctx, http.MethodGet, "/repos/"+repo+"/issues/"+n+"/comments?limit=50", nil, &comments); err != nil {
		return err
	}
	for _, cm := range comments {
		if !strings.Contains(cm.Body, "<!-- gns-guard:status") {
			continue
		}
		for _, line := range strings.Split(cm.Body, "\n") {
			if !strings.HasPrefix(strings.TrimSpace(line), "<!-- gns-guard:") {
				fmt.Println(line)
			}
		}
		return nil
	}
	return fmt.Errorf("issue #%s has no status comment of the guard", n)
}
