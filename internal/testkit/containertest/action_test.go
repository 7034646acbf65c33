package containertest_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/testkit"
	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// guardWorkflow is a user's workflow running the action from the server
// (`uses: <owner>/gns-guard@v1`) in a job container, with the inputs with
// and the step environment env. Around the guard's step, the job keeps the
// step summary files the runner hands each step (the runner empties the
// file before the next step, and Gitea 1.26 does not show it), and a last
// step prints the guard's outputs and its summary and hands the test the
// job's token, so the test can check the log never shows it.
func guardWorkflow(uses, tokenURL string, with, env map[string]string) string {
	var b strings.Builder
	b.WriteString(`name: gns-guard
run-name: "gns-guard #${{ github.event.issue.number }} ${{ github.event_name }}.${{ github.event.action }}"
on:
  issues:
    types: [opened, edited, reopened, labeled, unlabeled]
concurrency:
  group: gns-guard-${{ github.event.issue.number }}
  cancel-in-progress: false
jobs:
  guard:
    runs-on: ubuntu-latest
    defaults:
      run:
        shell: sh # the job image is busybox
    steps:
      - name: Keep the step summaries
        run: |
          kept="$(dirname "$GITHUB_STEP_SUMMARY")/../kept"
          mkdir -p "$kept"
          nohup sh -c 'while :; do f="$1"; if [ -e "$f" ]; then i=$(stat -c %i "$f"); [ -e "$2/$i" ] || ln "$f" "$2/$i" 2>/dev/null; fi; usleep 10000; done' keep "$GITHUB_STEP_SUMMARY" "$kept" >/dev/null 2>&1 </dev/null &
      - name: Guard
        id: guard
        uses: ` + uses + "\n")
	writeMap(&b, "with", with)
	writeMap(&b, "env", env)
	b.WriteString(`      - name: Show the outputs and the summary
        if: always()
        env:
          TOKEN: ${{ github.token }}
        run: |
          echo 'outputs: result=${{ steps.guard.outputs.result }} pruned=${{ steps.guard.outputs.pruned }} budget-remaining=${{ steps.guard.outputs.budget-remaining }} depth=${{ steps.guard.outputs.depth }}'
          for f in "$(dirname "$GITHUB_STEP_SUMMARY")"/../kept/*; do if [ -s "$f" ]; then sed 's/^/summary> /' "$f"; fi; done
          wget -q -O /dev/null --post-data="$TOKEN" ` + tokenURL + "\n")
	return b.String()
}

func writeMap(b *strings.Builder, key string, m map[string]string) {
	if len(m) == 0 {
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	fmt.Fprintf(b, "        %s:\n", key)
	for _, k := range keys {
		fmt.Fprintf(b, "          %s: %q\n", k, m[k])
	}
}

func example(t testing.TB, name string, n int64) string {
	t.Helper()
	root, err := testkit.Root()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "examples", "issues", name))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if strings.Count(s, "  issue: 42\n") != 1 {
		t.Fatalf("%s does not name issue 42 once", name)
	}
	return strings.Replace(s, "  issue: 42\n", fmt.Sprintf("  issue: %d\n", n), 1)
}

// wantNoToken checks that the log shows none of the tokens.
func wantNoToken(t *testing.T, log string, tokens ...string) {
	t.Helper()
	for _, tok := range tokens {
		if len(tok) >= 8 && strings.Contains(log, tok) {
			t.Errorf("the job log shows a token (%.4s...)", tok)
		}
	}
}

// wantLine checks that the log has a line containing want.
func wantLine(t *testing.T, log, want, why string) {
	t.Helper()
	if !strings.Contains(log, want) {
		t.Errorf("%s: the job log has no %q:\n%s", why, want, log)
	}
}

// TestActionThroughRunner runs the action as users run it: a workflow in
// another repository says `uses: <owner>/gns-guard@v1`; the Gitea runner,
// in container mode, clones the action from the server, builds its
// Dockerfile in the Docker engine and runs the image with the job's
// Actions token. It checks what a user sees on a clean pass, a violation
// (exit 1), a configuration error (exit 2) and an unreachable API (exit 3).
func TestActionThroughRunner(t *testing.T) {
	w := requireWorld(t)

	t.Run("pass and violation", func(t *testing.T) {
		r := w.newRepo(t, guardWorkflow(w.uses, w.tokens.url,
			map[string]string{"admin-token": "${{ secrets.GNS_GUARD_ADMIN_TOKEN }}"}, nil))
		r.secret("GNS_GUARD_ADMIN_TOKEN", w.s.AdminToken)
		std := []label{r.createLabel("cascade::depth-2"), r.createLabel("size::medium"), r.createLabel("phase::implementation")}
		// Opening an issue with labels is two events (opened, then the
		// labels): two runs, the first may be cancelled by the second.
		r.openIssue(1, "Rate limiting", example(t, "healthy.md", 1), std...)
		r.openIssue(2, "Rate limiting (too deep)", example(t, "depth-exceeded.md", 2), std...)

		runs := r.waitRuns(1, 2)
		last := runs[len(runs)-1]
		if last.Conclusion != "success" || (runs[0].Conclusion != "success" && runs[0].Conclusion != "cancelled") {
			t.Errorf("a healthy issue's runs, want success (the first may be cancelled):\n%s", giteatest.RunList(runs))
		}
		log := r.jobLog(last)
		wantLine(t, log, "outputs: result=pass pruned=false budget-remaining=13800 depth=1", "a later step reads the guard's outputs")
		// runs.env reached the container: the Actions token is known as
		// the Actions user's without asking, so a clean pass costs two
		// requests, and the run that posts the ledger eight (no GET /user;
		// the configuration file, who can write the issue, the status
		// comment posted first and a re-read, the read hint, the status
		// comment completed) and the
		// posture's own (once per commit; its log line counts them,
		// admin-token's apart). The posture warns: main is not protected.
		if strings.Contains(log, "posted the status comment") {
			m := regexp.MustCompile(`posture judged for commit \S+: \d+ of 12 check\(s\) do not hold \(read with (\d+) request\(s\), (\d+) of them with admin-token\)`).FindStringSubmatch(log)
			if m == nil {
				t.Fatalf("the run that posts the ledger judged no posture:\n%s", log)
			}
			all, _ := strconv.Atoi(m[1])
			owner, _ := strconv.Atoi(m[2])
			want := regexp.MustCompile(fmt.Sprintf(`pass \(0 violation\(s\), [1-9]\d* warning\(s\)\), %d API request\(s\)`, 8+all-owner))
			if !want.MatchString(log) {
				t.Errorf("the clean pass that posts the ledger: the job log has no %s:\n%s", want, log)
			}
		} else {
			wantLine(t, log, "posture as the ledger recorded it", "the clean pass takes the posture from the ledger")
			if !regexp.MustCompile(`pass \(0 violation\(s\), [1-9]\d* warning\(s\)\), 2 API request\(s\)`).MatchString(log) {
				t.Errorf("the clean pass: want 2 API requests:\n%s", log)
			}
		}
		wantLine(t, log, "summary> ", "the guard wrote its step summary to the file the runner mounted")
		wantNoToken(t, log, w.s.AdminToken)
		if cs := r.comments(1); len(cs) != 1 || !strings.Contains(cs[0].Body, "all clear") || !strings.Contains(cs[0].Body, "<!-- gns-guard:ledger v") {
			t.Errorf("a healthy issue: want the one status comment, all clear, holding the ledger; got %d comment(s): %+v", len(cs), cs)
		}

		runs = r.waitRuns(2, 2)
		last = runs[len(runs)-1]
		if last.Conclusion != "failure" {
			t.Errorf("a too-deep issue's last run, want failure:\n%s", giteatest.RunList(runs))
		}
		log = r.jobLog(last)
		wantLine(t, log, "Process completed with exit code 1.", "a violation exits 1")
		wantLine(t, log, "[depth-exceeded]", "the violation is named in the log")
		wantLine(t, log, "outputs: result=fail ", "a later step reads result=fail")
		wantLine(t, log, "summary> ", "the failed run's summary")
		wantLine(t, log, "depth-exceeded", "the summary names the rule")
		wantNoToken(t, log, w.s.AdminToken)
		is := r.issue(2)
		if !slices.Contains(is.labelNames(), "cascade::depth-exceeded") {
			t.Errorf("labels %v, want cascade::depth-exceeded", is.labelNames())
		}
		if !is.IsLocked {
			t.Error("the issue is not locked, though the admin-token secret reached the container")
		}
		cs := r.comments(2)
		var status []comment
		for _, c := range cs {
			if strings.Contains(c.Body, "<!-- gns-guard:status issue=2 -->") {
				status = append(status, c)
			}
		}
		if len(status) != 1 || status[0].User.Login != "gitea-actions" || !strings.Contains(status[0].Body, "depth 3 is over the cascade limit of 2") {
			t.Errorf("want one status comment by gitea-actions giving the numbers; got %d among %d comment(s): %+v", len(status), len(cs), status)
		}
		for _, run := range append(r.issueRuns(1), r.issueRuns(2)...) {
			if run.Conclusion != "cancelled" {
				wantNoToken(t, r.jobLog(run), w.tokens.all()...)
			}
		}
		if len(w.tokens.all()) == 0 {
			t.Error("no job handed the test its token: the token check checked nothing")
		}
	})

	t.Run("configuration error", func(t *testing.T) {
		r := w.newRepo(t, guardWorkflow(w.uses, w.tokens.url, map[string]string{"prune-threshold": "abc"}, nil))
		r.openIssue(1, "Rate limiting", example(t, "healthy.md", 1))
		runs := r.waitRuns(1, 1)
		if runs[0].Conclusion != "failure" {
			t.Errorf("want a failed run:\n%s", giteatest.RunList(runs))
		}
		log := r.jobLog(runs[0])
		wantLine(t, log, "Process completed with exit code 2.", "a configuration error exits 2")
		wantLine(t, log, "prune-threshold", "the error names the input")
		wantLine(t, log, "outputs: result=error ", "a later step reads result=error")
		wantNoToken(t, log, w.tokens.all()...)
		if cs := r.comments(1); len(cs) != 0 {
			t.Errorf("a misconfigured guard wrote %d comment(s)", len(cs))
		}
	})

	t.Run("unreachable API", func(t *testing.T) {
		r := w.newRepo(t, guardWorkflow(w.uses, w.tokens.url, nil, nil))
		// The runner's address for the server stops answering this
		// repository's API requests: the guard cannot reach the server.
		w.proxy.cutOff(r.owner, r.name)
		r.openIssue(1, "Rate limiting", example(t, "healthy.md", 1))
		runs := r.waitRuns(1, 1)
		if runs[0].Conclusion != "failure" {
			t.Errorf("want a failed run:\n%s", giteatest.RunList(runs))
		}
		log := r.jobLog(runs[0])
		wantLine(t, log, "Process completed with exit code 3.", "an unreachable API exits 3")
		wantLine(t, log, "could not reach", "the guard says it could not reach the server")
		wantLine(t, log, "outputs: result=error ", "a later step reads result=error")
		wantNoToken(t, log, w.tokens.all()...)
	})
}
