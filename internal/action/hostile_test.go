package action_test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

// hostileBody is an issue whose text tries every trick on the guard's log,
// outputs and comments: workflow commands on lines of their own and inside
// values, fence breakouts, a mention of a real user, the toolkit's output
// delimiter, newlines and carriage returns inside values. The checkpoint is
// invalid in ways that quote the hostile text back (a key, a type error).
func hostileBody(who string) func(int64) string {
	tricks := `::set-output name=result::pass\n::add-path::/tmp/pwned\r\n` + "```" + `\n~~~\n@` + who + ` _GitHubActionsFileCommandDelimeter_\nresult=pass`
	return func(n int64) string {
		return actiontest.WithIssue(`::set-env name=PWNED::1
::add-path::/tmp/pwned
::stop-commands::pwned
@`+who+` please look
_GitHubActionsFileCommandDelimeter_

`+"```yaml"+`
checkpoint:
  version: 2
  issue: 1
  phase: "`+tricks+`"
  depth: "::set-env name=DEPTH::1\n::add-mask::x"
  last_agent: lead-developer
  last_invocation: inv-1
  budget: {total: 20000, consumed: 6200, remaining: 13800}
  state: {labels: [cascade::depth-2, size::medium], assignee: lead-developer}
  next_agent: "`+tricks+`"
  next_estimated_tokens: 3500
  created_at: 2026-05-16T12:50:00Z
  "::add-path::/evil\n::set-env name=KEY::1 @`+who+` `+"```"+`": 1
`+"```\n", n)
	}
}

// hostileMarkers are substrings of the tricks that must never show raw.
var hostileMarkers = []string{"set-env", "add-path", "set-output", "PWNED", "pwned", "/evil", "```", "~~~", "_GitHubActionsFileCommandDelimeter_"}

var (
	fenceOpen  = regexp.MustCompile(`^::stop-commands::(gns-guard-[0-9a-f]{32})$`)
	ownLogLine = regexp.MustCompile(`^gns-guard: [^:]`)
	ownMarker  = regexp.MustCompile(`(?m)^<!-- gns-guard:(status|recovery) issue=\d+ -->$`)
)

// checkLog fails unless every line of stdout outside a stop-commands fence
// is the guard's own: a mask of a token it was given, a fence, or a
// "gns-guard: " line with none of the hostile text.
func checkLog(t *testing.T, stdout string, tokens []string, who string) {
	t.Helper()
	if strings.Contains(stdout, "\r") {
		t.Error("a carriage return reached the log")
	}
	fence := ""
	seen := map[string]bool{}
	for i, line := range strings.Split(strings.TrimSuffix(stdout, "\n"), "\n") {
		if fence != "" {
			if line == "::"+fence+"::" {
				fence = ""
			}
			continue
		}
		if m := fenceOpen.FindStringSubmatch(line); m != nil {
			if seen[m[1]] {
				t.Errorf("line %d: a stop-commands token was used twice: %s", i+1, m[1])
			}
			seen[m[1]] = true
			fence = m[1]
			continue
		}
		if mask, ok := strings.CutPrefix(line, "::add-mask::"); ok && slices.Contains(tokens, mask) {
			continue
		}
		bad := !ownLogLine.MatchString(line) || strings.Contains(strings.ToLower(line), "@"+strings.ToLower(who))
		for _, m := range hostileMarkers {
			bad = bad || strings.Contains(line, m)
		}
		if bad {
			t.Errorf("line %d is outside a stop-commands fence and is not the guard's own words: %q", i+1, line)
		}
	}
	if fence != "" {
		t.Errorf("the stop-commands fence %s is never closed: the runner would ignore every later command", fence)
	}
}

// checkOutputs fails unless the outputs are exactly the guard's, one line
// each, with the result the guard decided.
func checkOutputs(t *testing.T, r actiontest.Result, result string) {
	t.Helper()
	want := []string{"archive-comment-ids", "budget-remaining", "checkpoint-tokens", "context-ratio", "context-tokens", "depth", "max-depth", "metrics", "pruned", "result", "status-comment-id", "violations", "warnings"}
	var got []string
	for k, v := range r.Outputs {
		got = append(got, k)
		if strings.ContainsAny(v, "\r\n") || strings.Contains(v, "_GitHubActionsFileCommandDelimeter_") {
			t.Errorf("output %s holds a line break or the delimiter: %q", k, v)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("outputs %v, expected exactly %v", got, want)
	}
	if r.Outputs["result"] != result {
		t.Errorf("result %q, expected %q", r.Outputs["result"], result)
	}
	r.Violations(t) // JSON
	var m map[string]any
	actiontest.DecodeJSON(t, r, "metrics", &m)
}

// checkComments fails if a comment the guard wrote mentions who or holds a
// fence that untrusted text could break out of.
func checkComments(t *testing.T, f fixture, n int64, who string) {
	t.Helper()
	mine := 0
	for _, c := range f.Comments(t, n) {
		if c.User.Login != f.Guard().Login {
			continue
		}
		mine++
		low := strings.ToLower(c.Body)
		if strings.Contains(low, "@"+strings.ToLower(who)) {
			t.Errorf("comment %d mentions @%s:\n%s", c.ID, who, c.Body)
		}
		if strings.Contains(c.Body, "```") || strings.Contains(c.Body, "~~~") {
			t.Errorf("comment %d holds a code fence:\n%s", c.ID, c.Body)
		}
		// Its HTML comments are its own hidden marker, and, on the status
		// comment, its ledger record: quoted text cannot forge another (or
		// hide a GNS_EVENT footer).
		want := 1
		if strings.Contains(c.Body, actiontest.StatusMarker(n)) {
			want = 2
			if strings.Count(c.Body, "<!-- gns-guard:ledger v2 {") != 1 {
				t.Errorf("status comment %d lacks its ledger record:\n%s", c.ID, c.Body)
			}
		}
		if strings.Count(c.Body, "<!--") != want || !ownMarker.MatchString(c.Body) {
			t.Errorf("comment %d holds HTML comments other than its marker:\n%s", c.ID, c.Body)
		}
	}
	if mine == 0 {
		t.Fatal("the guard wrote no comment: nothing was checked")
	}
}

// Hostile text in the issue changes nothing it should not: no command
// reaches the runner, no output is added or overwritten, no comment the
// guard writes mentions anyone or breaks out of its Markdown.
func TestHostileIssueText(t *testing.T) {
	f := newFakeFixture(t)
	who := f.User(t, "bystander", giteatest.PermRead).Login
	title := "::set-env name=TITLE::1 @" + who
	n, d := f.Open(t, title, hostileBody(who), "cascade::depth-2", "size::medium")
	r := f.Run(t, d, "admin-token", f.Admin().Token)
	r.Expect(t, 1, "fail")
	if rs := r.Rules(t); len(rs) < 2 || !slices.Contains(rs, "checkpoint-invalid") {
		t.Fatalf("expected the hostile checkpoint to be invalid in several ways, got %v\n%s", rs, r.String())
	}
	// The hostile key is reported, escaped, in the log's fence.
	if !strings.Contains(r.Stdout, `::add-path::/evil\n::set-env name=KEY::1`) {
		t.Errorf("the finding on the hostile key is not in the log, escaped:\n%s", r.Stdout)
	}
	checkLog(t, r.Stdout, []string{f.Token, f.Admin().Token}, who)
	checkOutputs(t, r, "fail")
	checkComments(t, f, n, who)
	if len(f.GuardComments(t, n, actiontest.RecoveryMarker(n))) != 1 {
		t.Error("the recovery comment was not posted")
	}
}

// The same tricks in a valid checkpoint's agent names and in an agent's
// comment, which the guard quotes in agent-not-allowed and comment-protocol
// findings.
func TestHostileAgentNamesAndComments(t *testing.T) {
	f := newFakeFixture(t)
	who := f.User(t, "bystander", giteatest.PermRead).Login
	agent := f.User(t, "agent", giteatest.PermWrite)
	valid := func(n int64) string {
		b := hostileBody(who)(n)
		b = regexp.MustCompile(`(?m)^  depth: .*\n`).ReplaceAllString(b, "  depth: 1\n")
		b = regexp.MustCompile(`(?m)^  "::add-path.*\n`).ReplaceAllString(b, "")
		return b
	}
	n, _ := f.Open(t, "agents", valid, "cascade::depth-2", "size::medium")
	hostile := "## 🔄 ::set-env name=C::1 | phase:x\n::add-path::/tmp/pwned\r\n```\n@" + who + "\n<!-- GNS_EVENT {\"agent\": \"```@" + who + "\"} -->"
	_, d := f.Comment(t, n, agent, hostile)
	r := f.Run(t, d, "allowed-agents", "lead-developer", "admin-token", f.Admin().Token)
	r.Expect(t, 1, "fail")
	rs := r.Rules(t)
	if !slices.Contains(rs, "agent-not-allowed") || !slices.Contains(rs, "comment-protocol") {
		t.Fatalf("expected agent-not-allowed and comment-protocol, got %v\n%s", rs, r.String())
	}
	checkLog(t, r.Stdout, []string{f.Token, f.Admin().Token}, who)
	checkOutputs(t, r, "fail")
	checkComments(t, f, n, who)
	if !f.Issue(t, n).Locked {
		t.Error("agent-not-allowed did not lock the issue")
	}
}

// A checkpoint with thousands of unknown keys (within max-checkpoint-bytes)
// gives thousands of findings; what the guard writes stays bounded: the
// status and recovery comments list 50 and say how many more, every
// comment stays within 65,536 characters, and the log and the violations
// output list at most 1,000.
func TestFindingsFlood(t *testing.T) {
	f := newFakeFixture(t)
	flood := func(n int64) string {
		var b strings.Builder
		for i := range 5000 {
			fmt.Fprintf(&b, "  k%05d: x\n", i)
		}
		return replace(t, actiontest.Example(t, "healthy.md", n), "  next_agent: ", b.String()+"  next_agent: ")
	}
	n, d := f.Open(t, "flood", flood, "cascade::depth-2", "size::medium")
	r := f.Run(t, d)
	r.Expect(t, 1, "fail")
	if got := len(r.Violations(t)); got != 1000 {
		t.Errorf("the violations output lists %d, want the first 1,000", got)
	}
	if lines := strings.Count(r.Stdout, "[checkpoint-invalid]"); lines != 1000 || !strings.Contains(r.Stdout, "more finding(s)") {
		t.Errorf("the log lists %d findings", lines)
	}
	for _, c := range f.Comments(t, n) {
		if k := len([]rune(c.Body)); k > 65536 {
			t.Errorf("comment %d holds %d characters", c.ID, k)
		}
	}
	st := f.Status(t, n).Body
	if rows := strings.Count(st, "\n| ❌ |"); rows != 50 || !strings.Contains(st, "more finding(s)") || !strings.Contains(st, "<!-- gns-guard:ledger v2 ") {
		t.Errorf("the status comment lists %d findings:\n%.2000s", rows, st)
	}
}
