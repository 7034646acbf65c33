package cli

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/flagdoc"
)

// docs/cli.md, the command line's reference, names every flag of every
// verb.
func TestCLIDocNamesEveryFlag(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "cli.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	for _, v := range verbs {
		if v.flags == nil {
			continue
		}
		fs := flag.NewFlagSet(v.name, flag.ContinueOnError)
		v.flags(fs)
		fs.VisitAll(func(f *flag.Flag) {
			if !strings.Contains(doc, "`--"+f.Name) {
				t.Errorf("docs/cli.md does not name %s's flag --%s", v.name, f.Name)
			}
		})
	}
}

// A verb's help lists its own flags first, the required ones marked, then
// the guard's settings apart, then an example; action -h prints help and
// runs nothing.
func TestHelpGroups(t *testing.T) {
	stdout, _, code := runCLI(t, nil, "", "report", "-h")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	flags, settingsPart, ok := strings.Cut(stdout, "\nGuard settings")
	settingsPart, _, _ = strings.Cut(settingsPart, "\nExample:")
	if !ok || !strings.Contains(stdout, "\nExample:\n  gns-guard report --repo") {
		t.Fatalf("no settings group or example:\n%s", stdout)
	}
	for _, want := range []string{"  --repo OWNER/NAME   (required)\n", "  --consumed TOKENS   (required)\n", "  --result-file FILE\n"} {
		if !strings.Contains(flags, want) {
			t.Errorf("the verb's flags lack %q", want)
		}
	}
	if strings.Contains(flags, "--prune-threshold") || !strings.Contains(settingsPart, "--prune-threshold VALUE") || strings.Contains(settingsPart, "--result-file") {
		t.Errorf("settings and own flags mixed:\n%s", stdout)
	}
	if strings.Index(flags, "--action TEXT") > strings.Index(flags, "--assignee") {
		t.Errorf("a required flag comes after an optional one:\n%s", flags)
	}

	stdout, stderr, code := runCLI(t, nil, "", "action", "-h")
	if code != 0 || !strings.HasPrefix(stdout, "Usage: gns-guard action") || !strings.Contains(stdout, "INPUT_") || stderr != "" {
		t.Errorf("action -h: exit %d\n%s%s", code, stdout, stderr)
	}
}

// A mistake on the command line is echoed as typed, and a non-positive
// issue number is refused.
func TestFlagMistakes(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"report", "--bogus"}, "report: unknown flag --bogus\n"},
		{[]string{"report", "-bogus=1"}, "report: unknown flag -bogus\n"},
		{[]string{"report", "--consumed", "lots"}, `report: invalid value "lots" for flag --consumed: not a whole number`},
		{[]string{"report", "--consumed=92233720368547758070"}, "for flag --consumed: out of range"},
		{[]string{"check", "--issue", "-1", "body.md"}, "check: --issue must be a positive issue number, not -1"},
		{[]string{"prune", "--issue=0", "body.md"}, "prune: --issue must be a positive issue number, not 0"},
		{[]string{"context", "--body", "body.md", "--issue", "0"}, "context: --issue must be a positive issue number, not 0"},
		{[]string{"history", "--repo", "o/r", "--issue", "-3"}, "history: --issue N (a positive issue number) is required"},
		{[]string{"report", "--repo", "o/r", "--issue", "1", "--agent", "a", "--invocation", "i", "--consumed", "1", "--action", "x", "--depth", "99999999999"}, "report: --depth must be a whole number from 0 to 10000"},
		{[]string{"report", "--repo", "o/r", "--issue", "1", "--agent", "a", "--invocation", "i", "--consumed", "1", "--action", "x", "--current-task", " "}, "report: --current-task must say the task the next agent takes up"},
		{[]string{"action", "now"}, "action takes no arguments, got: now"},
	} {
		_, stderr, code := runCLI(t, map[string]string{"body.md": "# x\n"}, "", c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and %q", c.args, code, stderr, c.want)
		}
	}
}

// check's plan says that a prune starts a new phase budget, with its
// figures: the summary's budget is the one before it.
func TestCheckSaysThePruneResetsTheBudget(t *testing.T) {
	stdout, _, code := runCLI(t, map[string]string{"b.md": readTestdata(t, "examples/issues/over-budget.md")}, "", "check", "b.md")
	want := "b.md: the action would start a new phase budget with the prune: total 1300, consumed 0, remaining 1300 (was 2600 of 20000 left"
	if code != 0 || !strings.Contains(stdout, want) {
		t.Errorf("exit %d; want %q in:\n%s", code, want, stdout)
	}
}

// A verb's synopsis, its help's marks and its tool's schema come from its
// flags and the one declaration of what it requires: every own flag is in
// the synopsis with the value its usage names, the required ones outside
// brackets and marked in the help.
func TestSynopsisFromFlags(t *testing.T) {
	for _, v := range verbs {
		if v.flags == nil {
			continue
		}
		stdout, _, code := runCLI(t, nil, "", v.name, "-h")
		syn, _, _ := strings.Cut(strings.TrimPrefix(stdout, "Usage: gns-guard "), "\n")
		if code != 0 || !strings.HasPrefix(syn, v.name) {
			t.Fatalf("%s -h: exit %d\n%s", v.name, code, stdout)
		}
		fs := flag.NewFlagSet(v.name, flag.ContinueOnError)
		v.flags(fs)
		own, _ := v.doc().Split(fs)
		for _, f := range own {
			word := flagdoc.Word(f)
			required := slices.ContainsFunc(v.required, func(g []string) bool { return slices.Contains(g, f.Name) })
			switch {
			case !strings.Contains(syn, word):
				t.Errorf("%s's synopsis lacks %q: %s", v.name, word, syn)
			case required && strings.Contains(syn, "["+word):
				t.Errorf("%s's synopsis has the required %s in brackets: %s", v.name, word, syn)
			case !required && !strings.Contains(syn, "["+word+"]"):
				t.Errorf("%s's synopsis has the optional %s out of brackets: %s", v.name, word, syn)
			case required && !strings.Contains(stdout, "  "+word+"   (required"):
				t.Errorf("%s's help does not mark %s required:\n%s", v.name, word, stdout)
			}
		}
	}
	for _, c := range []struct{ verb, want string }{
		{"doctor", "  --repo OWNER/NAME   (required)\n"},
		{"init", "[--agents LOGIN|NAME=LOGIN,...]"},
		{"init", "[--runner docker|host]"},
		{"context", "Usage: gns-guard context (--repo OWNER/NAME --issue N | --body FILE) [--cap TOKENS]"},
		{"context", "  --body FILE   (required without --repo and --issue)\n"},
		{"context", "  --issue N   (required without --body)\n"},
		{"context", "[--file PATH]... "},
		{"report", "[--status ok|failed]"},
	} {
		if stdout, _, _ := runCLI(t, nil, "", c.verb, "-h"); !strings.Contains(stdout, c.want) {
			t.Errorf("%s -h lacks %q:\n%s", c.verb, c.want, stdout)
		}
	}
}

// docs/cli.md opens with the verbs' lines exactly as gns-guard -h prints
// them.
func TestCLIDocUsage(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "cli.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, block, _ := strings.Cut(string(data), "```\n")
	block, _, _ = strings.Cut(block, "```")
	var want strings.Builder
	for _, v := range verbs {
		for _, line := range v.usageLines() {
			want.WriteString("gns-guard " + line + "\n")
		}
	}
	if block != want.String() {
		t.Errorf("docs/cli.md's first block:\n%s\nwant (gns-guard -h):\n%s", block, want.String())
	}
}
