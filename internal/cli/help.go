package cli

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/gns-guard/gns-guard/internal/flagdoc"
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
	own, set := splitFlags(fs)
	slices.SortStableFunc(own, func(a, b *flag.Flag) int {
		return requiredRank(v, a.Name) - requiredRank(v, b.Name)
	})
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: gns-guard %s\n", v.synopsis(fs))
	if v.about != "" {
		fmt.Fprintf(&b, "\n%s\n", v.about)
	}
	if len(own) > 0 {
		b.WriteString("\nFlags:\n")
		for _, f := range own {
			writeFlag(&b, f, "", v.requiredMark(f.Name))
		}
	}
	if len(set) > 0 {
		b.WriteString("\nGuard settings (each overrides the repository's .gitea/gns-guard.yml; an empty value clears it):\n")
		for _, f := range set {
			writeFlag(&b, f, "VALUE", "")
		}
	}
	if v.example != "" {
		fmt.Fprintf(&b, "\nExample:\n  %s\n", v.example)
	}
	fmt.Fprint(w, b.String())
}

// splitFlags parts a verb's flags into its own and the guard's settings,
// each in the flag package's (alphabetical) order.
func splitFlags(fs *flag.FlagSet) (own, set []*flag.Flag) {
	fs.VisitAll(func(f *flag.Flag) {
		if isSettingFlag(f) {
			set = append(set, f)
		} else {
			own = append(own, f)
		}
	})
	return own, set
}

// writeFlag writes one flag of the help: its name and value (value, else
// the one its usage names), its mark when required, then its usage and
// default.
func writeFlag(b *strings.Builder, f *flag.Flag, value, mark string) {
	kind, text := flagdoc.Value(f)
	if kind != "" && value != "" {
		kind = value
	}
	b.WriteString("  --" + f.Name)
	if kind != "" {
		b.WriteString(" " + kind)
	}
	if mark != "" {
		b.WriteString("   (" + mark + ")")
	}
	b.WriteString("\n        " + strings.ReplaceAll(text, "\n", "\n        "))
	if d, ok := shownDefault(f); ok {
		fmt.Fprintf(b, " (default %s)", d)
	}
	b.WriteByte('\n')
}

// requiredRank orders a verb's flags: the required ones first, in the
// order the verb declares them, then the others (alphabetical, as the flag
// package visits them).
func requiredRank(v verb, name string) int {
	if i := slices.Index(slices.Concat(v.required...), name); i >= 0 {
		return i
	}
	return len(slices.Concat(v.required...))
}

// requiredMark is how the help marks a flag the verb requires: "required",
// or, when the verb takes alternatives, which flags stand in for it.
func (v verb) requiredMark(name string) string {
	for i, group := range v.required {
		if !slices.Contains(group, name) {
			continue
		}
		if len(v.required) == 1 {
			return "required"
		}
		var others []string
		for j, g := range v.required {
			if j != i {
				others = append(others, dashed(g, " and "))
			}
		}
		return "required without " + strings.Join(others, " or ")
	}
	return ""
}

// dashed writes flag names as the command line spells them.
func dashed(names []string, sep string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = "--" + n
	}
	return strings.Join(out, sep)
}

// flagWord is a flag as a synopsis shows it: --repo OWNER/NAME, --dry-run.
func flagWord(f *flag.Flag) string {
	if kind, _ := flagdoc.Value(f); kind != "" {
		return "--" + f.Name + " " + kind
	}
	return "--" + f.Name
}

// synopsis is the verb's command line as its help opens: its arguments,
// the flags it requires (alternatives in parentheses), every other flag
// of its own in brackets, and [--SETTING VALUE]... when it takes the
// guard's settings as flags.
func (v verb) synopsis(fs *flag.FlagSet) string {
	words := v.head(fs, v.required...)
	own, set := splitFlags(fs)
	for _, f := range own {
		if requiredRank(v, f.Name) < len(slices.Concat(v.required...)) {
			continue
		}
		w := "[" + flagWord(f) + "]"
		if flagdoc.Repeats(f) {
			w += "..."
		}
		words = append(words, w)
	}
	if len(set) > 0 {
		words = append(words, "[--SETTING VALUE]...")
	}
	return strings.Join(words, " ")
}

// head opens a synopsis: the verb, its arguments and the required flags of
// the groups given, in parentheses when they are alternatives.
func (v verb) head(fs *flag.FlagSet, groups ...[]string) []string {
	words := []string{v.name}
	if v.args != "" {
		words = append(words, v.args)
	}
	var alts []string
	for _, g := range groups {
		var ws []string
		for _, name := range g {
			if f := fs.Lookup(name); f != nil {
				ws = append(ws, flagWord(f))
			}
		}
		if len(ws) > 0 {
			alts = append(alts, strings.Join(ws, " "))
		}
	}
	switch len(alts) {
	case 0:
	case 1:
		words = append(words, alts[0])
	default:
		words = append(words, "("+strings.Join(alts, " | ")+")")
	}
	return words
}

// usageWidth is the longest verb line the top-level usage shows whole;
// a longer one ends in [flags].
const usageWidth = 80

// usageLines are the verb's lines in the top-level usage: its synopsis
// when it is short, else one line per way to call it, with [flags].
func (v verb) usageLines() []string {
	fs := flag.NewFlagSet(v.name, flag.ContinueOnError)
	if v.flags != nil {
		v.flags(fs)
	}
	note := ""
	if v.note != "" {
		note = "   " + v.note
	}
	if full := v.synopsis(fs); len(full) <= usageWidth {
		return []string{full + note}
	}
	groups := v.required
	if len(groups) == 0 {
		groups = [][]string{nil}
	}
	lines := make([]string, len(groups))
	for i, g := range groups {
		lines[i] = strings.Join(v.head(fs, g), " ") + " [flags]" + note
	}
	return lines
}

// isSettingFlag says a flag is one of the guard's settings (package
// settings declares them, with the setting's description as usage), not a
// verb's own flag of the same name (tokens' --encoding, schema's
// --history-tail).
func isSettingFlag(f *flag.Flag) bool {
	s, ok := settings.Lookup(f.Name)
	return ok && s.Flag && strings.HasPrefix(f.Usage, s.Description)
}
