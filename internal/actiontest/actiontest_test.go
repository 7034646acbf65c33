package actiontest

import (
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/giteatest"
)

func TestMain(m *testing.M) { giteatest.Main(m) }

func TestParseOutputsRejectsASecondValue(t *testing.T) {
	_, err := ParseOutputs("result=pass\nresult=fail\n")
	if err == nil || !strings.Contains(err.Error(), "set twice") {
		t.Fatalf("a repeated output must be an error, got %v", err)
	}
	got, err := ParseOutputs("a<<EOF_1\nline 1\nline 2\nEOF_1\nb=2\n")
	if err != nil || got["a"] != "line 1\nline 2" || got["b"] != "2" {
		t.Fatalf("got %q, %v", got, err)
	}
}

// The harness end to end: a real issue event, captured from the server,
// drives the built binary, which reads the issue live and passes.
func TestHealthyIssuePasses(t *testing.T) {
	s := giteatest.Require(t)
	owner, repo := s.NewRepo(t)
	hook := NewHook(t, s, owner, repo)
	n := CreateIssue(t, s, owner, repo, "healthy", func(n int64) string { return Example(t, "healthy.md", n) }, "cascade::depth-2", "size::medium")
	d := hook.Next(t, Is("issues", "opened", n))
	// The guard's token belongs to a user other than the issue's author: a
	// personal token's own events are skipped (no loops).
	_, tok := Collaborator(t, s, owner, repo, "guard", giteatest.PermWrite)
	step := Step{Server: s, Owner: owner, Repo: repo, Token: tok}
	r := step.Run(t, d)
	if r.Code != 0 || r.Outputs["result"] != "pass" {
		t.Fatalf("exit %d, result %q\nstdout:\n%s\nstderr:\n%s", r.Code, r.Outputs["result"], r.Stdout, r.Stderr)
	}
	if r.Outputs["depth"] != "1" || r.Outputs["max-depth"] != "2" || r.Outputs["budget-remaining"] != "13800" {
		t.Errorf("outputs: %v", r.Outputs)
	}
}
