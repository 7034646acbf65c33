package cli

import (
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/gns-guard/gns-guard/internal/settings"
)

// newFlags returns a flag set for a verb. The flag package prints nothing
// itself: a mistake becomes one usage error (parse), and -h prints the
// verb's help (printHelp) on standard output.
func newFlags(v verb, env Env) *flag.FlagSet {
	fs := flag.NewFlagSet(v.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() { printHelp(env.Stdout, fs, v) }
	return fs
}

// printHelp prints a verb's help: its synopsis, its own flags (the
// required ones first, marked), then the guard's settings it takes as
// flags, then an example. A flag's default is shown only when it is a
// value one would pass: not a sentinel that means "not given" (a negative
// or zero number, "" or false).
func printHelp(w io.Writer, fs *flag.FlagSet, v verb) {
	var own, set []*flag.Flag
	fs.VisitAll(func(f *flag.Flag) {
		if isSettingFlag(f) {
			set = append(set, f)
		} else {
			own = append(own, f)
		}
	})
	slices.SortStableFunc(own, func(a, b *flag.Flag) int {
		return requiredRank(v, a.Name) - requiredRank(v, b.Name)
	})
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: gns-guard %s\n", v.synopsis)
	if v.about != "" {
		fmt.Fprintf(&b, "\n%s\n", v.about)
	}
	if len(own) > 0 {
		b.WriteString("\nFlags:\n")
		values := synopsisValues(v.synopsis)
		for _, f := range own {
			writeFlag(&b, f, values[f.Name], slices.Contains(v.required, f.Name))
		}
	}
	if len(set) > 0 {
		b.WriteString("\nGuard settings (each overrides the repository's .gitea/gns-guard.yml; an empty value clears it):\n")
		for _, f := range set {
			writeFlag(&b, f, "VALUE", false)
		}
	}
	if v.example != "" {
		fmt.Fprintf(&b, "\nExample:\n  %s\n", v.example)
	}
	fmt.Fprint(w, b.String())
}

// writeFlag writes one flag of the help: its name and value (value, else
// what the flag package calls it), marked when required, then its usage
// and default.
func writeFlag(b *strings.Builder, f *flag.Flag, value string, required bool) {
	kind, text := flag.UnquoteUsage(f)
	switch {
	case kind == "":
	case value != "":
		kind = value
	case kind == "string":
		kind = "TEXT"
	case kind == "int" || kind == "uint":
		kind = "N"
	}
	b.WriteString("  --" + f.Name)
	if kind != "" {
		b.WriteString(" " + kind)
	}
	if required {
		b.WriteString("   (required)")
	}
	b.WriteString("\n        " + strings.ReplaceAll(text, "\n", "\n        "))
	if d, ok := shownDefault(f); ok {
		fmt.Fprintf(b, " (default %s)", d)
	}
	b.WriteByte('\n')
}

// requiredRank orders a verb's flags: the required ones first, in the
// order the verb lists them, then the others (alphabetical, as the flag
// package visits them).
func requiredRank(v verb, name string) int {
	if i := slices.Index(v.required, name); i >= 0 {
		return i
	}
	return len(v.required)
}

// isSettingFlag says a flag is one of the guard's settings (package
// settings declares them, with the setting's description as usage), not a
// verb's own flag of the same name (tokens' --encoding, schema's
// --history-tail).
func isSettingFlag(f *flag.Flag) bool {
	s, ok := settings.Lookup(f.Name)
	return ok && s.Flag && strings.HasPrefix(f.Usage, s.Description)
}

// commonValues name the values of the flags many verbs share, where a
// synopsis leaves them out.
var commonValues = map[string]string{
	"config": "FILE", "format": "FORMAT", "guard-user": "LOGIN", "ledger-key-env": "NAME",
	"server": "URL", "token": "TOKEN", "labels": "L1,L2", "metrics-file": "FILE", "overflow-log": "FILE",
	"now": "TIME", "public-key": "KEY", "trust": "LOGIN",
}

// synopsisValues are the value names the synopsis gives flags: "--repo
// OWNER/NAME" names --repo's value OWNER/NAME.
func synopsisValues(synopsis string) map[string]string {
	out := maps.Clone(commonValues)
	words := strings.Fields(strings.NewReplacer("[", " ", "]", " ", "(", " ", ")", " ", "|", " | ").Replace(synopsis))
	for i := 0; i+1 < len(words); i++ {
		name, ok := strings.CutPrefix(words[i], "--")
		next := words[i+1]
		if ok && next != "|" && !strings.HasPrefix(next, "-") && strings.ToUpper(next) == next {
			out[name] = strings.TrimRight(next, ".,")
		}
	}
	return out
}
