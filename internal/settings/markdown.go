package settings

import (
	"bytes"
	"fmt"
	"strings"
)

// ExampleFile is the example .gitea/gns-guard.yml of the configuration
// reference.
const ExampleFile = `# .gitea/gns-guard.yml, on the default branch
allowed-agents:
  - orchestrator
  - architect
  - lead-developer
budget-admins: alice, bob
default-max-depth: 2
max-budget: 200000
prune-threshold: 0.75
protected-paths: [.kilo/, .gitea/]
`

// configurationDoc renders docs/configuration.md (TestConfigurationDoc holds
// it).
func configurationDoc() []byte {
	var b bytes.Buffer
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("# Configuration\n\n")
	p("<!-- Generated from the settings table (internal/settings); do not edit.\n")
	p("     Regenerate with: go test ./internal/settings -run TestConfigurationDoc -update -->\n\n")
	p("Every setting of gns-guard is one row of the table below: an input of the action,\n")
	p("a key of the repository's configuration file `%s`, a flag of the CLI verbs\n", FileName)
	p("that judge an issue, or several of these. Each source is checked the same way.\n\n")

	p("## Where a value comes from\n\n")
	p("Later sources override earlier ones, setting by setting:\n\n")
	p("1. the table's default;\n")
	p("2. `%s` on the repository's default branch (only people who can push\n", FileName)
	p("   to it can change it);\n")
	p("3. the workflow step's `with:` inputs (the action), or the verb's flags (the CLI).\n\n")
	p("The action reads the file once per commit of the default branch (its ledger records it). The CLI verbs that judge a live issue read the\n")
	p("same file from the server (`--config FILE` reads a local one instead), so they judge\n")
	p("exactly as the guard does.\n\n")
	p("A runner hands the step an empty text for every input the workflow does not give, so an\n")
	p("empty input means \"not given\": it leaves the file's value. That is also why the inputs a\n")
	p("file may set have no default in `action.yml`: their defaults are the ones below. To clear\n")
	p("a value, clear it in the file (`max-budget:` with nothing after it, `protected-paths: []`)\n")
	p("or give an empty flag (`--max-budget=`).\n\n")

	p("## Settings\n\n")
	p("| name | type | accepted values | default | in file | input | flag | description |\n")
	p("|---|---|---|---|---|---|---|---|\n")
	yes := func(ok bool) string {
		if ok {
			return "yes"
		}
		return "no"
	}
	for _, s := range Table() {
		def := "`" + s.Default + "`"
		switch {
		case s.ActionDefault != "":
			def = "`" + s.ActionDefault + "` (in action.yml)"
		case s.Default == "":
			def = "empty"
		}
		p("| `%s` | %s | %s | %s | %s | %s | %s | %s |\n", s.Name, s.Kind, cell(s.Range), def,
			yes(s.File), yes(s.Input), yes(s.Flag), cell(s.Description))
	}
	p("\n")

	p("## The file\n\n")
	p("A YAML mapping of settings, one a line; for example:\n\n")
	p("```yaml\n%s```\n\n", ExampleFile)
	p("- A list is a YAML list or a comma- or newline-separated text; blanks around items are\n")
	p("  trimmed and empty items dropped. An empty list (`[]` or nothing) means none.\n")
	p("- A number may be written plain or quoted: `max-budget: 200000` and `max-budget: \"200000\"`\n")
	p("  are the same.\n")
	p("- Anchors and aliases are not allowed, and the file may be at most %d bytes (64 KiB).\n", MaxFileBytes)
	p("- Secrets (%s) never go in the file, which anyone who can read the\n", codeList(names(func(s Setting) bool { return s.Kind == Secret })))
	p("  repository can read: keep them in the repository's Actions secrets and give them to the\n")
	p("  step as inputs, e.g. `ledger-key: ${{ secrets.GNS_GUARD_LEDGER_KEY }}`.\n\n")

	p("## Errors\n\n")
	p("An unknown key, a key given twice, a secret in the file or a value that is not accepted is a\n")
	p("configuration error (exit 2) that names the source, the setting and, in the file, the line\n")
	p("and column:\n\n")
	p("```\n")
	p("%s\n", (&Error{Source: FileName, Key: "prune-threshold", Value: "2", Want: mustLookup("prune-threshold").Range, Line: 3, Col: 18}).Error())
	p("%s\n", (&Error{Source: FileName, Key: "prune-treshold", Reason: "unknown key" + hint("prune-treshold"), Line: 3, Col: 1}).Error())
	p("%s\n", (&Error{Source: SourceInput, Key: "max-budget", Value: "0", Want: mustLookup("max-budget").Range}).Error())
	p("%s\n", (&Error{Source: SourceFlag, Key: "history-tail", Value: "0", Want: mustLookup("history-tail").Range}).Error())
	p("```\n")
	return b.Bytes()
}

// cell escapes text for a cell of a Markdown table.
func cell(s string) string {
	return strings.ReplaceAll(s, "|", `\|`)
}

// codeList is names as inline code, joined by commas.
func codeList(names []string) string {
	return "`" + strings.Join(names, "`, `") + "`"
}

func mustLookup(name string) Setting {
	s, ok := Lookup(name)
	if !ok {
		panic("settings: no setting " + name)
	}
	return s
}
