package action_test

import (
	"strings"
	"testing"
)

// A repository configured only through .gitea/gns-guard.yml on its default
// branch: the file's rules fail a run, an input of the workflow overrides
// the file, a run for the commit the ledger recorded reads no file (a clean
// pass keeps its requests; what a first run costs on Gitea,
// TestFirstRunCost holds), and a broken file is a configuration error
// (exit 2) naming the file, the key and its line.
func TestRepositoryConfigurationFile(t *testing.T) {
	f := newFakeFixture(t)
	f.CommitFile(t, ".gitea/gns-guard.yml", "# the agents of this repository\nallowed-agents: [orchestrator, architect, lead-developer]\n")

	// The file's allowed-agents has no code-reviewer: the healthy issue's
	// next agent is refused.
	_, d := f.Open(t, "configured by the file", example(t, "healthy.md"), "cascade::depth-2", "size::medium", "phase::implementation")
	r := f.Run(t, d)
	r.Expect(t, 1, "fail")
	if rules := r.Rules(t); len(rules) == 0 || rules[0] != "agent-not-allowed" {
		t.Errorf("violations %v, want agent-not-allowed from the file's allowed-agents\n%s", rules, r)
	}

	// The workflow's input overrides the file.
	n, d := f.Open(t, "the input overrides the file", example(t, "healthy.md"), "cascade::depth-2", "size::medium", "phase::implementation")
	agents := "orchestrator, architect, lead-developer, code-reviewer"
	r = f.Run(t, d, "allowed-agents", agents)
	r.Expect(t, 0, "pass")

	// The next run is for the same commit: the ledger's record of the file
	// stands in for it.
	_, d = f.Comment(t, n, f.Admin(), "a note from a person")
	r = f.Run(t, d, "allowed-agents", agents)
	r.Expect(t, 0, "pass")
	if r.Requests != cleanPassRequests || len(r.Writes) != 0 {
		t.Errorf("a clean pass for the same commit made %d requests and wrote %q; want %d and nothing", r.Requests, r.Writes, cleanPassRequests)
	}

	// A new commit breaks the file: every run says where; its one write is
	// the status comment, which says the issue could not be judged (no
	// longer all clear) and keeps its ledger record.
	before := f.Status(t, n)
	f.CommitFile(t, ".gitea/gns-guard.yml", "allowed-agents: [orchestrator]\nprune-treshold: 0.5\n")
	_, d = f.Comment(t, n, f.Admin(), "another note")
	r = f.Run(t, d, "allowed-agents", agents)
	r.Expect(t, 2, "error")
	want := `.gitea/gns-guard.yml:2:1: prune-treshold: unknown key (did you mean "prune-threshold"?)`
	if !strings.Contains(r.Stdout, want) || len(r.Writes) != 1 || !strings.Contains(r.Writes[0], "could not be judged") {
		t.Errorf("a broken configuration file: want %q in the log and the status comment's edit\n%s", want, r)
	}
	st := f.Status(t, n)
	if strings.Contains(st.Body, "all clear") || !strings.Contains(st.Body, "could not judge this issue") || !strings.Contains(st.Body, "prune-treshold") || st.ID != before.ID ||
		ledgerLine(st.Body) != ledgerLine(before.Body) {
		t.Errorf("the status comment while the file does not load:\n%s", st.Body)
	}
	// A run again says it once: no second write.
	_, d = f.Comment(t, n, f.Admin(), "a third note")
	if r = f.Run(t, d, "allowed-agents", agents); len(r.Writes) != 0 {
		t.Errorf("the run after wrote %q", r.Writes)
	}
	// A new issue gets no status comment.
	m, d := f.Open(t, "opened while the file is broken", example(t, "healthy.md"), "cascade::depth-2", "size::medium", "phase::implementation")
	f.Run(t, d, "allowed-agents", agents).Expect(t, 2, "error")
	if cs := f.Comments(t, m); len(cs) != 0 {
		t.Errorf("a status comment was created while the file does not load: %d comments", len(cs))
	}
}

// TestFirstRunCost: on Gitea, the first run on a healthy issue of a
// repository with a configuration file costs firstRunRequests (the file
// read once), and the next run for the same commit a clean pass's
// requests.
func TestFirstRunCost(t *testing.T) {
	f := newFixture(t)
	f.CommitFile(t, ".gitea/gns-guard.yml", "# the agents of this repository\nallowed-agents: [orchestrator, architect, lead-developer, code-reviewer]\n")
	n, d := f.Open(t, "the first run's cost", example(t, "healthy.md"), "cascade::depth-2", "size::medium", "phase::implementation")
	r := f.Run(t, d)
	r.Expect(t, 0, "pass")
	if r.Requests != firstRunRequests {
		t.Errorf("the first run made %d requests, want %d (it reads the file once)\n%s", r.Requests, firstRunRequests, r.Stdout)
	}
	_, d = f.Comment(t, n, f.Admin(), "a note from a person")
	r = f.Run(t, d)
	r.Expect(t, 0, "pass")
	if r.Requests != cleanPassRequests || len(r.Writes) != 0 {
		t.Errorf("a clean pass for the same commit made %d requests and wrote %q; want %d and nothing", r.Requests, r.Writes, cleanPassRequests)
	}
}

// ledgerLine is the hidden ledger record of a status comment.
func ledgerLine(body string) string {
	i := strings.Index(body, "<!-- gns-guard:ledger ")
	if i < 0 {
		return ""
	}
	return body[i:]
}
