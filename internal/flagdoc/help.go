package flagdoc

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Command is what a command's help says beside its flags.
type Command struct {
	Name string
	// Args are its positional arguments as the synopsis shows them: FILE|-.
	Args string
	// Required are the flags it cannot run without: every flag of one
	// group, or of one of several alternative groups.
	Required [][]string
	// Note follows its line in the top-level usage; About its synopsis in
	// the help; Example is one command line the help shows.
	Note, About, Example string
	// Setting says a flag is one of the guard's settings, listed apart.
	Setting func(*flag.Flag) bool
}

// Help writes the help: the synopsis, the command's own flags (the
// required ones first, marked), then the settings it takes as flags, then
// an example. A default is shown only when it is a value one would pass.
func (c Command) Help(w io.Writer, fs *flag.FlagSet) {
	own, set := c.Split(fs)
	slices.SortStableFunc(own, func(a, b *flag.Flag) int { return c.requiredRank(a.Name) - c.requiredRank(b.Name) })
	var b strings.Builder
	fmt.Fprintf(&b, "Usage: gns-guard %s\n", c.Synopsis(fs))
	if c.About != "" {
		fmt.Fprintf(&b, "\n%s\n", c.About)
	}
	if len(own) > 0 {
		b.WriteString("\nFlags:\n")
		for _, f := range own {
			writeFlag(&b, f, "", c.requiredMark(f.Name))
		}
	}
	if len(set) > 0 {
		b.WriteString("\nGuard settings (each overrides the repository's .gitea/gns-guard.yml; an empty value clears it):\n")
		for _, f := range set {
			writeFlag(&b, f, "VALUE", "")
		}
	}
	if c.Example != "" {
		fmt.Fprintf(&b, "\nExample:\n  %s\n", c.Example)
	}
	fmt.Fprint(w, b.String())
}

// Split parts the flags into the command's own and the settings, each in
// the flag package's (alphabetical) order.
func (c Command) Split(fs *flag.FlagSet) (own, set []*flag.Flag) {
	fs.VisitAll(func(f *flag.Flag) {
		if c.Setting != nil && c.Setting(f) {
			set = append(set, f)
		} else {
			own = append(own, f)
		}
	})
	return own, set
}

// writeFlag writes one flag of the help: its name and value (value, else
// the one its usage names), its mark, then its usage and default.
func writeFlag(b *strings.Builder, f *flag.Flag, value, mark string) {
	kind, text := Value(f)
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

// shownDefault is a flag's default as help shows it, or false when it is
// a sentinel ("", 0, false, a negative number).
func shownDefault(f *flag.Flag) (string, bool) {
	d := f.DefValue
	if IsBool(f) {
		return d, d == "true"
	}
	var v any
	if g, ok := f.Value.(flag.Getter); ok {
		v = g.Get()
	}
	switch v.(type) {
	case string:
		return strconv.Quote(d), d != ""
	case int, int64, uint, uint64, float64:
		n, err := strconv.ParseFloat(d, 64)
		return d, err == nil && n > 0
	case time.Duration:
		n, err := time.ParseDuration(d)
		return d, err == nil && n > 0
	}
	return d, d != "" && d != "0" && d != "[]"
}

// requiredRank orders the flags: the required ones first, in the order
// declared, then the others.
func (c Command) requiredRank(name string) int {
	all := slices.Concat(c.Required...)
	if i := slices.Index(all, name); i >= 0 {
		return i
	}
	return len(all)
}

// requiredMark marks a required flag: "required", or, among alternatives,
// which flags stand in for it.
func (c Command) requiredMark(name string) string {
	for i, group := range c.Required {
		if !slices.Contains(group, name) {
			continue
		}
		if len(c.Required) == 1 {
			return "required"
		}
		var others []string
		for j, g := range c.Required {
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

// Word is a flag as a synopsis shows it: --repo OWNER/NAME, --dry-run.
func Word(f *flag.Flag) string {
	if kind, _ := Value(f); kind != "" {
		return "--" + f.Name + " " + kind
	}
	return "--" + f.Name
}

// Synopsis is the command line the help opens with: the arguments, the
// required flags (alternatives in parentheses), every other own flag in
// brackets, and [--SETTING VALUE]... when it takes settings.
func (c Command) Synopsis(fs *flag.FlagSet) string {
	words := c.head(fs, c.Required...)
	own, set := c.Split(fs)
	for _, f := range own {
		if c.requiredRank(f.Name) < len(slices.Concat(c.Required...)) {
			continue
		}
		w := "[" + Word(f) + "]"
		if Repeats(f) {
			w += "..."
		}
		words = append(words, w)
	}
	if len(set) > 0 {
		words = append(words, "[--SETTING VALUE]...")
	}
	return strings.Join(words, " ")
}

// head opens a synopsis: the name, the arguments and the required flags
// of the groups given, in parentheses when they are alternatives.
func (c Command) head(fs *flag.FlagSet, groups ...[]string) []string {
	words := []string{c.Name}
	if c.Args != "" {
		words = append(words, c.Args)
	}
	var alts []string
	for _, g := range groups {
		var ws []string
		for _, name := range g {
			if f := fs.Lookup(name); f != nil {
				ws = append(ws, Word(f))
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

// usageWidth is the longest line the top-level usage shows whole; a
// longer one ends in [flags].
const usageWidth = 80

// UsageLines are the command's lines in the top-level usage: its synopsis
// when it is short, else one line per way to call it, with [flags].
func (c Command) UsageLines(fs *flag.FlagSet) []string {
	note := ""
	if c.Note != "" {
		note = "   " + c.Note
	}
	if full := c.Synopsis(fs); len(full) <= usageWidth {
		return []string{full + note}
	}
	groups := c.Required
	if len(groups) == 0 {
		groups = [][]string{nil}
	}
	lines := make([]string, len(groups))
	for i, g := range groups {
		lines[i] = strings.Join(c.head(fs, g), " ") + " [flags]" + note
	}
	return lines
}
