package guard

import (
	"slices"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/issues"
)

// contentFindings are the content-too-large violations of a plan.
func contentFindings(p *Plan) []Violation {
	var out []Violation
	for _, v := range p.Violations {
		if v.Rule == RuleContentTooLarge {
			out = append(out, v)
		}
	}
	return out
}

// A comment too large to read is a violation naming it, its author and
// its length, with permission::violation; every other rule still runs,
// and the entry load counts it as its length in bytes.
func TestContentTooLargeComment(t *testing.T) {
	in := input(t, body(), "cascade::depth-2")
	in.Recent = []issues.Comment{
		{ID: 11, Author: "ann", Body: "fine"},
		{ID: 12, Author: "mallory", TooLarge: true, BodyBytes: 8 << 20, HTMLURL: "http://h/o/r/issues/9#issuecomment-12"},
		{ID: 13, Author: "bob", Body: "also fine"},
	}
	p := Decide(in)
	vs := contentFindings(p)
	if len(vs) != 1 {
		t.Fatalf("findings %v", ruleIDs(p))
	}
	v := vs[0]
	for _, want := range []string{"comment 12", `"mallory"`, "8,388,608 bytes", "7,340,032 or more over the 1,048,576", "shorten or delete it, then remove permission::violation"} {
		if !strings.Contains(v.Message, want) {
			t.Errorf("the message lacks %q: %s", want, v.Message)
		}
	}
	if v.Label != in.Config.Labels.PermissionViolation || v.KeyPath != "comment#12" || p.Links["comment#12"] == "" {
		t.Errorf("label %q, key path %q, links %v", v.Label, v.KeyPath, p.Links)
	}
	if !slices.Contains(p.AddLabels, in.Config.Labels.PermissionViolation) || p.Resolved {
		t.Errorf("labels %v, resolved %v", p.AddLabels, p.Resolved)
	}
	// The other rules ran on what was read: the entry load holds the
	// comment as 8 MiB of tokens, which is pressure.
	if p.Numbers.CommentTokens < 8<<20 || !slices.Contains(ruleIDs(p), RuleContextPressure) {
		t.Errorf("comment tokens %d, rules %v", p.Numbers.CommentTokens, ruleIDs(p))
	}
}

// A comment further back (read while looking for the status comment) is
// reported too, once even when it was read twice; a clean read reports
// nothing.
func TestContentTooLargeOlderComment(t *testing.T) {
	in := input(t, body(), "cascade::depth-2")
	big := issues.Comment{ID: 5, Author: "eve", TooLarge: true, BodyBytes: 2 << 20}
	in.Older = []issues.Comment{big, {ID: 6, Author: "ann", Body: "x"}}
	in.Recent = []issues.Comment{big, {ID: 7, Author: "ann", Body: "y"}}
	if vs := contentFindings(Decide(in)); len(vs) != 1 || !strings.Contains(vs[0].Message, "comment 5") {
		t.Errorf("findings %+v", vs)
	}
	in.Older, in.Recent = nil, []issues.Comment{{ID: 7, Author: "ann", Body: "y"}}
	if vs := contentFindings(Decide(in)); len(vs) != 0 {
		t.Errorf("a clean read: %+v", vs)
	}
}

// Timeline entries the forge gave up on are reported as not read.
func TestContentTooLargeUnread(t *testing.T) {
	in := input(t, body(), "cascade::depth-2")
	in.Recent = []issues.Comment{{ID: 1, Author: "ann", Body: "x"}, {TooLarge: true, Unread: 37}}
	vs := contentFindings(Decide(in))
	if len(vs) != 1 || !strings.Contains(vs[0].Message, "37 timeline entries were not read") || vs[0].Label == "" {
		t.Errorf("findings %+v", vs)
	}
}

// A body too large to read: the violation, and the checkpoint rules say
// the checkpoint cannot be read; nothing writes the body; the issue is
// governed even without a governed label (its body may hold a
// checkpoint).
func TestContentTooLargeBody(t *testing.T) {
	for _, labels := range [][]string{{"cascade::depth-2"}, nil} {
		in := input(t, "", labels...)
		in.Issue.BodyTooLarge, in.Issue.BodyBytes = true, 6<<20
		if !IsGoverned(in.Issue, in.Config) {
			t.Errorf("labels %v: not governed", labels)
		}
		p := Decide(in)
		if !p.Governed || p.Skipped != "" {
			t.Fatalf("labels %v: skipped: %s", labels, p.Skipped)
		}
		vs := contentFindings(p)
		if len(vs) != 1 || !strings.Contains(vs[0].Message, "issue body is at least 6,291,456 bytes") || !strings.Contains(vs[0].Message, "5,242,880 or more over") || vs[0].KeyPath != "" {
			t.Errorf("labels %v: findings %+v", labels, vs)
		}
		var missing string
		for _, v := range p.Violations {
			if v.Rule == RuleCheckpointMissing {
				missing = v.Message
			}
		}
		if !strings.Contains(missing, "too large to read") {
			t.Errorf("labels %v: checkpoint-missing says %q", labels, missing)
		}
		if p.Prune != nil || !slices.Contains(p.AddLabels, in.Config.Labels.PermissionViolation) {
			t.Errorf("labels %v: prune %v, labels %v", labels, p.Prune, p.AddLabels)
		}
	}
}
