package faulttest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/gns-guard/gns-guard/internal/prune"
	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
)

// archiveComment is one of the guard's archive comments, read back.
type archiveComment struct {
	ID int64
	*prune.Archive
}

// archives returns the guard's archive comments on the issue, oldest first.
func archives(t testing.TB, f *actiontest.Repo, n int64) []archiveComment {
	t.Helper()
	var out []archiveComment
	for _, c := range f.Comments(t, n) {
		if c.User.Login != f.Bot || !strings.Contains(c.Body, prune.MarkerPrefix) {
			continue
		}
		a, err := prune.ParseArchive(c.Body)
		if err != nil {
			t.Fatalf("archive comment %d cannot be read: %v", c.ID, err)
		}
		out = append(out, archiveComment{c.ID, a})
	}
	return out
}

// duplicateArchives reports the archive parts posted more than once, and
// history entries held by more than one archive.
func duplicateArchives(as []archiveComment) []string {
	var dups []string
	parts := map[string]int64{}
	held := map[prune.Entry]int64{}
	for _, a := range as {
		key := fmt.Sprintf("%s part %d", a.SHA256[:12], a.Part)
		if id, ok := parts[key]; ok {
			dups = append(dups, fmt.Sprintf("archive %s is in comments %d and %d", key, id, a.ID))
		}
		parts[key] = a.ID
		for _, e := range a.Entries {
			if id, ok := held[e]; ok && id != a.ID {
				dups = append(dups, fmt.Sprintf("entry %q of %s is archived in comments %d and %d", e.Action, e.Agent, id, a.ID))
			}
			held[e] = a.ID
		}
	}
	return dups
}

// history rebuilds the issue's full history with the real `gns-guard
// history` against the server, with the guard's token (so the guard's
// archives are the trusted ones). It fails the test unless the command
// exits 0 without a word on standard error.
func history(t testing.TB, f *actiontest.Repo, n int64) []prune.Entry {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, actiontest.Binary(t), "history", "--repo", f.Owner+"/"+f.Name,
		"--issue", fmt.Sprint(n), "--server", f.S.URL, "--token", f.Token, "--format", "json")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir()}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || stderr.Len() > 0 {
		t.Fatalf("gns-guard history: %v\n%s", err, stderr.String())
	}
	var got []struct {
		prune.Entry
		Seq int `json:"seq"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("gns-guard history --format json: %v\n%s", err, stdout.String())
	}
	out := make([]prune.Entry, len(got))
	for i, g := range got {
		if g.Seq != i+1 {
			t.Fatalf("gns-guard history: entry %d has seq %d", i+1, g.Seq)
		}
		out[i] = g.Entry
	}
	return out
}

// sameHistory fails the test unless got is want, entry for entry.
func sameHistory(t testing.TB, got, want []prune.Entry) {
	t.Helper()
	if slices.Equal(got, want) {
		return
	}
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			t.Fatalf("the rebuilt history differs at entry %d of %d (rebuilt %d entries):\n got  %+v\n want %+v", i+1, len(want), len(got), got[i], want[i])
		}
	}
	t.Fatalf("the rebuilt history has %d entries, want %d", len(got), len(want))
}

// doc is a checkpoint as an agent edits it: its own reading of schema v2,
// independent of the guard's code.
type doc struct {
	Version        int    `yaml:"version"`
	Issue          int64  `yaml:"issue"`
	Phase          string `yaml:"phase"`
	Depth          int    `yaml:"depth"`
	LastAgent      string `yaml:"last_agent"`
	LastInvocation string `yaml:"last_invocation"`
	Budget         struct {
		Total     int64 `yaml:"total"`
		Consumed  int64 `yaml:"consumed"`
		Remaining int64 `yaml:"remaining"`
	} `yaml:"budget"`
	State struct {
		Labels    []string `yaml:"labels,flow"`
		Assignee  string   `yaml:"assignee"`
		Milestone any      `yaml:"milestone,omitempty"`
	} `yaml:"state"`
	History             []entry  `yaml:"history,omitempty"`
	HistoryTail         []entry  `yaml:"history_tail,omitempty"`
	CurrentTask         string   `yaml:"current_task,omitempty"`
	AgentChain          []string `yaml:"agent_chain,omitempty,flow"`
	NextAgent           string   `yaml:"next_agent"`
	NextEstimatedTokens int64    `yaml:"next_estimated_tokens"`
	CreatedAt           string   `yaml:"created_at"`
}

// entry is a history entry; it encodes as a one-line flow mapping.
type entry struct {
	Agent      string `yaml:"agent"`
	Action     string `yaml:"action"`
	Invocation string `yaml:"invocation,omitempty"`
	Timestamp  string `yaml:"timestamp,omitempty"`
}

func (e entry) MarshalYAML() (any, error) {
	n := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
	add := func(k, v string) {
		if v != "" {
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, &yaml.Node{Kind: yaml.ScalarNode, Value: v, Style: yaml.DoubleQuotedStyle})
		}
	}
	add("agent", e.Agent)
	add("action", e.Action)
	add("invocation", e.Invocation)
	add("timestamp", e.Timestamp)
	return n, nil
}

func (e entry) prune() prune.Entry {
	return prune.Entry{Agent: e.Agent, Action: e.Action, Invocation: e.Invocation, Timestamp: e.Timestamp}
}

func entries(es []entry) []prune.Entry {
	out := make([]prune.Entry, len(es))
	for i, e := range es {
		out[i] = e.prune()
	}
	return out
}

var blockRE = regexp.MustCompile("(?s)(```ya?ml\n)(.*?\n)(```)")

// decode reads the body's checkpoint block.
func decode(body string) (*doc, error) {
	m := blockRE.FindStringSubmatch(body)
	if m == nil {
		return nil, errors.New("no yaml block in the body")
	}
	var root struct {
		Checkpoint *doc `yaml:"checkpoint"`
	}
	dec := yaml.NewDecoder(strings.NewReader(m[2]))
	dec.KnownFields(true)
	if err := dec.Decode(&root); err != nil {
		return nil, err
	}
	if root.Checkpoint == nil {
		return nil, errors.New("the yaml block has no checkpoint")
	}
	return root.Checkpoint, nil
}

// encode writes cp into the body's checkpoint block; nothing else changes.
func encode(body string, cp *doc) (string, error) {
	loc := blockRE.FindStringSubmatchIndex(body)
	if loc == nil {
		return "", errors.New("no yaml block in the body")
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(map[string]*doc{"checkpoint": cp}); err != nil {
		return "", err
	}
	if err := enc.Close(); err != nil {
		return "", err
	}
	return body[:loc[4]] + b.String() + body[loc[5]:], nil
}

// edit is an agent's edit of the issue: read the body, change it, write it
// back with compare-and-swap, and start over on a conflict. It returns the
// body written.
func edit(t testing.TB, f *actiontest.Repo, n int64, change func(body string, cp *doc) string) string {
	t.Helper()
	for attempt := 1; ; attempt++ {
		is := f.Issue(t, n)
		cp, err := decode(is.Body)
		if err != nil {
			t.Fatalf("issue #%d: the agent cannot read the checkpoint: %v\n%s", n, err, is.Body)
		}
		body, err := encode(change(is.Body, cp), cp)
		if err != nil {
			t.Fatal(err)
		}
		in := map[string]any{"body": body, "content_version": is.ContentVersion}
		err = actiontest.API(context.Background(), f.S, f.S.AdminToken, http.MethodPatch, f.Path("/issues/%d", n), in, nil)
		if err == nil {
			return body
		}
		if !strings.Contains(err.Error(), "HTTP 409") || attempt == 50 {
			t.Fatalf("issue #%d: the agent's edit failed (attempt %d): %v", n, attempt, err)
		}
	}
}

// agentComment is an agent result comment as docs/contract.md §5b has it: the header,
// a line of text and the GNS_EVENT footer.
func agentComment(agent, invocation, phase string, depth int, before, consumed, remaining int64, next, text string) string {
	ev := map[string]any{
		"agent": agent, "invocation": invocation, "event_type": "subagent_result", "phase": phase, "depth": depth,
		"budget": map[string]int64{"before": before, "consumed": consumed, "remaining": remaining},
		"status": "success", "verdict": "approved", "files_changed": 2,
		"key_stats": map[string]any{"tests": 12}, "next_agent": next,
	}
	js, err := json.Marshal(ev)
	if err != nil {
		panic(err)
	}
	return fmt.Sprintf("## 🔄 %s | phase:%s | depth:%d\n\n%s\n\n<!-- GNS_EVENT %s -->", agent, phase, depth, text, js)
}

// withTail returns the shipped healthy example with k entries in
// history_tail (so k-3 are due for the archive) for issue n.
func withTail(t testing.TB, n int64, k int) string {
	t.Helper()
	body := actiontest.Example(t, "healthy.md", n)
	cp, err := decode(body)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(cp.HistoryTail); i < k; i++ {
		cp.HistoryTail = append(cp.HistoryTail, entry{Agent: "tester", Action: fmt.Sprintf("ran suite %d", i+1), Timestamp: fmt.Sprintf("2026-05-16T13:%02d:00Z", 21+i)})
	}
	cp.HistoryTail = cp.HistoryTail[:k]
	body, err = encode(body, cp)
	if err != nil {
		t.Fatal(err)
	}
	return body
}
