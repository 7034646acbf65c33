package prune

import (
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
)

func parse0(body string) checkpoint.Result { return checkpoint.Parse(body, checkpoint.Options{}) }

// hostile is a history whose text tries every way out of the archive.
var hostile = []Entry{
	{Agent: "x|y", Action: "```\n<!-- gns-guard:archive issue=42 phase=p part=1/1 sha256=" + strings.Repeat("a", 64) + " -->\n```", Timestamp: "2026-01-01T00:00:00Z"},
	{Agent: "@alice", Action: "ping @bob and #3 -->  <script>alert(1)</script> & `code` \\| end"},
	{Agent: "z", Action: "\u2028line\u2029sep\r\nnext", Invocation: "a|b"},
	{Agent: "tail1", Action: "t", Timestamp: "2026-01-01T00:00:00Z"},
	{Agent: "tail2", Action: "t", Timestamp: "2026-01-01T00:00:00Z"},
	{Agent: "tail3", Action: "t", Timestamp: "2026-01-01T00:00:00Z"},
}

func hostilePlan(t *testing.T) *Result {
	t.Helper()
	body := spec{Phase: "impl <b>@x</b> --> ünï", Total: 100, Consumed: 90, Entries: hostile}.body(t)
	res, err := Plan(body, parse(t, body), 0, nil, testNow, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Archives) != 1 {
		t.Fatalf("%d archives", len(res.Archives))
	}
	return res
}

func TestArchiveSafe(t *testing.T) {
	res := hostilePlan(t)
	a := res.Archives[0]
	lines := strings.Split(strings.TrimSuffix(a, "\n"), "\n")
	// Exactly one marker, on the last line, with the sanitized phase.
	if got := strings.Count(a, "<!--"); got != 1 {
		t.Errorf("%d HTML comment openers, want 1 (the marker):\n%s", got, a)
	}
	if want := "<!-- gns-guard:archive issue=42 phase=impl__b__x__b__--___n_ part=1/1 sha256=" + res.SHA256 + " prev=" + Genesis + " count=3 sig=unsigned -->"; lines[len(lines)-1] != want {
		t.Errorf("marker line %q, want %q", lines[len(lines)-1], want)
	}
	// No raw <, >, @ or backtick fence outside our own text.
	for _, bad := range []string{"<script", "<b>", "@alice", "@bob", "@x", "-->  "} {
		if strings.Contains(a, bad) {
			t.Errorf("archive contains %q", bad)
		}
	}
	fences := regexp.MustCompile("(?m)^ {0,3}(```|~~~)").FindAllString(a, -1)
	if len(fences) != 2 {
		t.Errorf("%d fence lines, want 2 (the json block):\n%s", len(fences), a)
	}
	// Table rows: one line each, six unescaped pipes.
	rows := 0
	for _, l := range lines {
		if strings.HasPrefix(l, "| ") && !strings.HasPrefix(l, "| # ") {
			rows++
			if n := strings.Count(strings.ReplaceAll(l, `\|`, ""), "|"); n != 6 {
				t.Errorf("row with %d cell separators: %s", n, l)
			}
		}
	}
	if rows != 3 {
		t.Errorf("%d rows, want 3:\n%s", rows, a)
	}
	// And every byte reads back.
	p, err := ParseArchive(a)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(p.Entries, hostile[:3]) || p.Phase != "impl <b>@x</b> --> ünï" {
		t.Errorf("read back %+v", p)
	}
	if err := Verify([]*Archive{p}); err != nil {
		t.Error(err)
	}
}

func TestParseArchiveErrors(t *testing.T) {
	res := hostilePlan(t)
	a := res.Archives[0]
	if _, err := ParseArchive("plain comment"); err != ErrNotArchive {
		t.Errorf("err = %v", err)
	}
	// CRLF (a comment edited in the web UI) still reads.
	if _, err := ParseArchive(strings.ReplaceAll(a, "\n", "\r\n")); err != nil {
		t.Errorf("CRLF: %v", err)
	}
	mutations := map[string]func(string) string{
		"marker issue":  func(s string) string { return replaceLast(s, "archive issue=42", "archive issue=43") },
		"marker part":   func(s string) string { return replaceLast(s, "part=1/1", "part=1/2") },
		"marker phase":  func(s string) string { return replaceLast(s, "phase=impl_", "phase=impX") },
		"marker sha":    func(s string) string { return replaceLast(s, "sha256="+res.SHA256[:4], "sha256=ffff") },
		"marker prev":   func(s string) string { return replaceLast(s, "prev="+Genesis[:4], "prev=ffff") },
		"marker count":  func(s string) string { return replaceLast(s, "count=3", "count=4") },
		"marker sig":    func(s string) string { return replaceLast(s, "sig=unsigned", "sig="+strings.Repeat("a", 64)) },
		"json count":    func(s string) string { return strings.Replace(s, `"count":3`, `"count":2`, 1) },
		"json missing":  func(s string) string { return strings.Replace(s, "```json", "```text", 1) },
		"json broken":   func(s string) string { return strings.Replace(s, `{"gns_archive"`, `{"gns_archive"]`, 1) },
		"json version":  func(s string) string { return strings.Replace(s, `"gns_archive":2`, `"gns_archive":3`, 1) },
		"json first":    func(s string) string { return strings.Replace(s, `"first_seq":1`, `"first_seq":0`, 1) },
		"json no parts": func(s string) string { return strings.Replace(s, `"parts":1`, `"parts":0`, 1) },
	}
	for name, mutate := range mutations {
		m := mutate(a)
		if m == a {
			t.Errorf("%s: mutation did nothing", name)
			continue
		}
		if _, err := ParseArchive(m); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// An edited entry parses, but does not verify.
	edited := strings.Replace(a, `"agent":"z"`, `"agent":"Z"`, 1)
	p, err := ParseArchive(edited)
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify([]*Archive{p}); err == nil || !strings.Contains(err.Error(), "edited") {
		t.Errorf("Verify = %v", err)
	}
}

func TestRebuild(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	// Two successive prunes: archive A (first), then archive B.
	orig := randEntries(rng, 40)
	cfg := DefaultConfig()
	cfg.MaxCommentChars = 3000
	v1 := spec{Total: 1000, Consumed: 900, Entries: orig[:20]}.body(t)
	p1, err := Plan(v1, parse(t, v1), 0, nil, testNow, cfg)
	if err != nil {
		t.Fatal(err)
	}
	kept := p1.Kept
	for i := range orig[20:] {
		if orig[20+i].Timestamp == "" {
			orig[20+i].Timestamp = "2026-04-04T04:04:04Z"
		}
	}
	v2 := spec{Total: 1000, Consumed: 900, Entries: append(slices.Clone(kept), orig[20:]...), Tail: true}.body(t)
	p2, err := Plan(v2, parse(t, v2), 0, nil, testNow, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(p1.Archives) < 2 || len(p2.Archives) < 2 {
		t.Fatalf("want several parts: %d, %d", len(p1.Archives), len(p2.Archives))
	}
	tail := p2.Kept
	want := append(append(slices.Clone(p1.Archived), p2.Archived...), tail...)

	a := comments(p1.Archives, "bot", 10)
	b := comments(p2.Archives, "bot", 50)
	dupA := comments(p1.Archives, "bot", 90) // a concurrent run posted A again
	var cs []Comment
	cs = append(cs, b...)
	cs = append(cs, dupA...)
	cs = append(cs, a...)
	cs = append(cs, Comment{ID: 5, Author: "eve", Body: p2.Archives[0]}) // copied by someone else: untrusted
	rng.Shuffle(len(cs), func(i, j int) { cs[i], cs[j] = cs[j], cs[i] })

	got, problems := Rebuild(cs, "bot", testIssue, tail, nil)
	if len(problems) > 0 {
		t.Fatalf("problems: %v", problems)
	}
	if !slices.Equal(Entries(got), want) {
		t.Fatalf("rebuilt %d entries, want %d", len(got), len(want))
	}
	for i, r := range got {
		if r.Seq != i+1 {
			t.Fatalf("seq %d at %d", r.Seq, i)
		}
		switch {
		case i < len(p1.Archived):
			if r.Comment < 10 || r.Comment >= 10+int64(len(a)) {
				t.Fatalf("entry %d from comment %d, want one of A's first copies", i+1, r.Comment)
			}
		case i < len(p1.Archived)+len(p2.Archived):
			if r.Comment < 50 || r.Comment >= 50+int64(len(b)) {
				t.Fatalf("entry %d from comment %d, want one of B's", i+1, r.Comment)
			}
		default:
			if r.Comment != 0 {
				t.Fatalf("tail entry %d from comment %d", i+1, r.Comment)
			}
		}
	}

	// Order follows the lowest comment id: with B posted first, B comes first.
	got, _ = Rebuild(append(comments(p2.Archives, "bot", 1), a...), "bot", testIssue, nil, nil)
	if !slices.Equal(Entries(got)[:len(p2.Archived)], p2.Archived) {
		t.Error("archives not ordered by their lowest comment id")
	}

	// A missing part and an edited part are problems; what can be read is kept.
	broken := slices.Clone(a[1:])
	edited := b[0]
	edited.Body = strings.Replace(edited.Body, `"entries":[{"agent":"`, `"entries":[{"agent":"EDITED`, 1)
	broken = append(broken, edited)
	broken = append(broken, b[1:]...)
	broken = append(broken, Comment{ID: 99, Author: "bot", Body: strings.Replace(a[0].Body, "```json", "```", 1)})
	got, problems = Rebuild(broken, "bot", testIssue, tail, nil)
	if len(problems) != 3 {
		t.Fatalf("problems = %v", problems)
	}
	joined := problems[0].String() + "\n" + problems[1].String() + "\n" + problems[2].String()
	for _, want := range []string{"comment 99: archive: the marker is there but the ```json block is missing", "part(s) 1 of", "it was edited"} {
		if !strings.Contains(joined, want) {
			t.Errorf("problems lack %q:\n%s", want, joined)
		}
	}
	if len(got) != len(want)-countEntries(t, a[0].Body) {
		t.Errorf("rebuilt %d entries, want %d", len(got), len(want)-countEntries(t, a[0].Body))
	}

	// Another issue's archive is ignored, with a problem.
	_, problems = Rebuild(a, "bot", 7, nil, nil)
	if len(problems) != len(a) {
		t.Errorf("problems = %v", problems)
	}
	// Nobody trusted: nothing from comments.
	got, problems = Rebuild(a, "", testIssue, tail, nil)
	if len(problems) != 0 || !slices.Equal(Entries(got), tail) {
		t.Errorf("untrusted rebuild: %d entries, %v", len(got), problems)
	}
}

func replaceLast(s, old, new string) string {
	i := strings.LastIndex(s, old)
	if i < 0 {
		return s
	}
	return s[:i] + new + s[i+len(old):]
}

func countEntries(t *testing.T, body string) int {
	t.Helper()
	p, err := ParseArchive(body)
	if err != nil {
		t.Fatal(err)
	}
	return len(p.Entries)
}

func TestSanitizePhase(t *testing.T) {
	for in, want := range map[string]string{
		"":                       "_",
		"impl":                   "impl",
		"v1.2:build-3_x":         "v1.2:build-3_x",
		"a b-->c":                "a_b--_c",
		"日本":                     "__",
		strings.Repeat("a", 300): strings.Repeat("a", 100),
	} {
		if got := SanitizePhase(in); got != want {
			t.Errorf("SanitizePhase(%q) = %q, want %q", in, got, want)
		}
	}
}
