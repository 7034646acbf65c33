package cli

import (
	"flag"
	"io"
	"strings"
	"testing"
	"time"
)

// parseEnv is the world of a parse: no files, no variables, output dropped.
func parseEnv() Env {
	return Env{
		Stdout:   io.Discard,
		Stderr:   io.Discard,
		Getenv:   func(string) string { return "" },
		ReadFile: func(string) ([]byte, error) { return nil, io.ErrUnexpectedEOF },
		Now:      func() time.Time { return time.Date(2026, 5, 16, 14, 0, 0, 0, time.UTC) },
	}
}

// The verb table is the one list of verbs: each name once, each in the
// usage text, and every verb with flags takes --format, as the usage says.
func TestVerbTable(t *testing.T) {
	seen := map[string]bool{}
	text := usageText()
	for _, v := range verbs {
		if seen[v.name] {
			t.Errorf("verb %q is listed twice", v.name)
		}
		seen[v.name] = true
		if !strings.Contains(text, "  gns-guard "+v.name) {
			t.Errorf("the usage text lacks %q", v.name)
		}
		if v.flags == nil {
			continue
		}
		fs := flag.NewFlagSet(v.name, flag.ContinueOnError)
		v.flags(fs)
		if fs.Lookup("format") == nil {
			t.Errorf("%s takes no --format", v.name)
		}
	}
}

// A verb's arguments parse into its options without running it: report
// parses offline, and what the flags imply is settled.
func TestParseApart(t *testing.T) {
	v, _ := verbNamed("report")
	o, err := v.parse([]string{"--repo", "org/proj", "--issue", "7", "--agent", "coder", "--invocation", "i-1",
		"--consumed", "120", "--action", "did it", "--labels-add", "a,b", "--depth", "2"}, parseEnv())
	if err != nil {
		t.Fatal(err)
	}
	r := o.(*reportOptions)
	if r.repo != "org/proj" || r.issue != 7 || r.req.Report.Agent != "coder" || r.req.Report.NextEstimate != 0 ||
		r.req.Report.Depth == nil || *r.req.Report.Depth != 2 || r.req.Report.Assignee != nil || strings.Join(r.req.Report.LabelsAdd, ",") != "a,b" {
		t.Errorf("report parsed into %+v", r.req.Report)
	}

	v, _ = verbNamed("check")
	for _, tt := range []struct {
		args   []string
		labels []string
	}{
		{[]string{"b.md"}, nil},
		{[]string{"b.md", "--labels="}, []string{}},
		{[]string{"--labels", "x,y", "-"}, []string{"x", "y"}},
	} {
		o, err := v.parse(tt.args, parseEnv())
		if err != nil {
			t.Fatal(err)
		}
		c := o.(*checkOptions)
		if (c.labels == nil) != (tt.labels == nil) || strings.Join(c.labels, ",") != strings.Join(tt.labels, ",") {
			t.Errorf("check %q: labels %#v, want %#v", tt.args, c.labels, tt.labels)
		}
	}
}
