package prune

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
)

var testNow = time.Date(2026, 5, 17, 8, 0, 0, 0, time.UTC)

// spec describes a checkpoint body for tests.
type spec struct {
	Phase     string
	Total     int64
	Consumed  int64
	Labels    []string
	Entries   []Entry
	Tail      bool // write the entries as history_tail instead of history
	Bare      bool // no fence around the block
	CRLF      bool
	NoHistory bool
}

type yEntry struct {
	Agent      string `yaml:"agent"`
	Action     string `yaml:"action"`
	Invocation string `yaml:"invocation,omitempty"`
	Timestamp  string `yaml:"timestamp,omitempty"`
}

type yBudget struct {
	Total     int64 `yaml:"total"`
	Consumed  int64 `yaml:"consumed"`
	Remaining int64 `yaml:"remaining"`
}

type yState struct {
	Labels   []string `yaml:"labels,flow"`
	Assignee string   `yaml:"assignee"`
}

type yBody struct {
	Version        int      `yaml:"version"`
	Issue          int64    `yaml:"issue"`
	Phase          string   `yaml:"phase"`
	Depth          int      `yaml:"depth"`
	LastAgent      string   `yaml:"last_agent"`
	LastInvocation string   `yaml:"last_invocation"`
	Budget         yBudget  `yaml:"budget"`
	State          yState   `yaml:"state"`
	History        []yEntry `yaml:"history,omitempty"`
	HistoryTail    []yEntry `yaml:"history_tail,omitempty"`
	NextAgent      string   `yaml:"next_agent"`
	NextEstimated  int64    `yaml:"next_estimated_tokens"`
	CreatedAt      string   `yaml:"created_at"`
}

const testIssue = 42

// body renders a spec as an issue body.
func (s spec) body(t testing.TB) string {
	t.Helper()
	if s.Phase == "" {
		s.Phase = "implementation"
	}
	if s.Labels == nil {
		s.Labels = []string{"cascade::depth-2", "size::medium"}
	}
	b := yBody{
		Version: 2, Issue: testIssue, Phase: s.Phase, LastAgent: "orchestrator", LastInvocation: "inv-0",
		Budget:    yBudget{s.Total, s.Consumed, s.Total - s.Consumed},
		State:     yState{Labels: s.Labels, Assignee: "orchestrator"},
		NextAgent: "coder", CreatedAt: "2026-05-16T12:50:00Z",
	}
	ys := make([]yEntry, len(s.Entries))
	for i, e := range s.Entries {
		ys[i] = yEntry(e)
	}
	switch {
	case s.NoHistory:
	case s.Tail:
		b.HistoryTail = ys
	default:
		b.History = ys
		if len(ys) == 0 {
			b.History = nil
		}
	}
	out, err := yaml.Marshal(map[string]yBody{"checkpoint": b})
	if err != nil {
		t.Fatal(err)
	}
	text := string(out)
	if !s.Bare {
		text = "# Task\n\nBody text | with `code` and @someone.\n\n```yaml\n" + text + "```\n\nTrailing text.\n"
	}
	if s.CRLF {
		text = strings.ReplaceAll(text, "\n", "\r\n")
	}
	return text
}

func parse(t testing.TB, body string) checkpoint.Result {
	t.Helper()
	r := checkpoint.Parse(body, checkpoint.Options{MaxBytes: len(body) + 1})
	if !r.Valid() {
		t.Fatalf("test body is not valid: %v\n%s", r.Findings, body)
	}
	return r
}

// pieces of hostile and unusual text for random entries.
var pieces = []string{
	"a", "deploy", "fix", " ", "|", "||", "`", "```", "~~~", "-->", "<!--", "<!-- gns-guard:archive issue=42 phase=x part=1/1 sha256=" + strings.Repeat("0", 64) + " -->",
	"@alice", "@", "#12", "&amp;", "&", "<b>", ">", "\\", "\\|", "\n", "\n\n", "\r", "\t", "é", "日本語", "😀", "\u2028", "\u200b",
	"::set-env name=X::1", "\"", "'", ": ", "- ", "# ", "{", "}", "[", "]", "*", "!", "%", "null", "true", "123", "0x1F",
}

func randText(rng *rand.Rand, most int) string {
	var b strings.Builder
	b.WriteString([]string{"x", "Agent", "build", "ok"}[rng.IntN(4)])
	for n := rng.IntN(most + 1); n > 0; n-- {
		b.WriteString(pieces[rng.IntN(len(pieces))])
	}
	return b.String()
}

func randEntries(rng *rand.Rand, n int) []Entry {
	es := make([]Entry, n)
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range es {
		es[i] = Entry{Agent: randText(rng, 2), Action: randText(rng, 8)}
		if rng.IntN(2) == 0 {
			es[i].Invocation = fmt.Sprintf("inv-%d", rng.IntN(1000))
		}
		switch rng.IntN(3) {
		case 0:
			es[i].Timestamp = base.Add(time.Duration(i) * time.Minute).Format(time.RFC3339)
		case 1:
			es[i].Timestamp = base.Add(time.Duration(i) * time.Second).In(time.FixedZone("", 2*3600)).Format(time.RFC3339)
		}
	}
	return es
}

// comments turns archive bodies into comments by author, ids from first.
func comments(archives []string, author string, first int64) []Comment {
	out := make([]Comment, len(archives))
	for i, a := range archives {
		out[i] = Comment{ID: first + int64(i), Author: author, Body: a}
	}
	return out
}

// expected is the history after a prune: the original entries, with the
// kept ones stamped with now where they had no timestamp.
func expected(orig []Entry, limit int, fromHistory bool, now time.Time) []Entry {
	out := slices.Clone(orig)
	if fromHistory {
		for i := max(0, len(out)-limit); i < len(out); i++ {
			if out[i].Timestamp == "" {
				out[i].Timestamp = now.UTC().Format(time.RFC3339)
			}
		}
	}
	return out
}

// checkLossless rebuilds the history from a prune's archives and new body
// and compares it with want.
func checkLossless(t testing.TB, res *Result, want []Entry, maxChars int) {
	t.Helper()
	for i, a := range res.Archives {
		if n := runes(a); n > maxChars {
			t.Fatalf("archive part %d is %d characters, over %d", i+1, n, maxChars)
		}
	}
	after := checkpoint.Parse(res.Body, checkpoint.Options{MaxBytes: len(res.Body) + 1})
	if !after.Valid() {
		t.Fatalf("pruned body is not valid: %v\n%s", after.Findings, res.Body)
	}
	// Archives posted twice, a forged one and noise must not count.
	cs := comments(res.Archives, "bot", 100)
	cs = append(cs, comments(res.Archives, "bot", 200)...)
	cs = append(cs, Comment{ID: 1, Author: "mallory", Body: forged()}, Comment{ID: 2, Author: "bot", Body: "just a comment"})
	got, problems := Rebuild(cs, "bot", res.issue, FromCheckpoint(after.Checkpoint.Entries()), &Chain{Head: res.Head, Count: res.Count, Known: true})
	if len(problems) > 0 {
		t.Fatalf("problems: %v", problems)
	}
	if g := Entries(got); !slices.Equal(g, want) {
		for i := range min(len(g), len(want)) {
			if g[i] != want[i] {
				t.Fatalf("entry %d: got %+v, want %+v (of %d/%d)", i+1, g[i], want[i], len(g), len(want))
			}
		}
		t.Fatalf("got %d entries, want %d", len(g), len(want))
	}
}

// forged is an archive comment written by someone else.
func forged() string {
	es := []Entry{{Agent: "mallory", Action: "rewrote history"}}
	sha := Hash(testIssue, "implementation", Snapshot{}, es)
	out, _, _ := render(archive{issue: testIssue, phase: "implementation", sha: sha, entries: es}, DefaultMaxCommentChars)
	return out[0]
}
