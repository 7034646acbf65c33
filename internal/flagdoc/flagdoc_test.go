package flagdoc

import (
	"flag"
	"slices"
	"testing"
)

type list []string

func (l *list) String() string     { return "" }
func (l *list) Set(v string) error { *l = append(*l, v); return nil }

// A flag says its value's name, its choices and whether it repeats; a
// name that is not a list of words has no choices.
func TestFlagSaysItself(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.String("repo", "", "the repository, `OWNER/NAME`")
	fs.String("format", "text", "output format: `text|json`")
	fs.String("labels", "", "labels, `L1,L2`")
	fs.String("pick", "", "a `A|B` in capitals is a name, not choices")
	fs.Int64("issue", 0, "the issue's number")
	fs.Bool("dry-run", false, "write nothing")
	fs.Var(&list{}, "file", "a `PATH`, repeatable")
	for _, c := range []struct {
		flag, name, usage string
		choices           []string
		repeats           bool
	}{
		{"repo", "OWNER/NAME", "the repository, OWNER/NAME", nil, false},
		{"format", "text|json", "output format: text|json", []string{"text", "json"}, false},
		{"labels", "L1,L2", "labels, L1,L2", nil, false},
		{"pick", "A|B", "a A|B in capitals is a name, not choices", nil, false},
		{"issue", "N", "the issue's number", nil, false},
		{"dry-run", "", "write nothing", nil, false},
		{"file", "PATH", "a PATH, repeatable", nil, true},
	} {
		f := fs.Lookup(c.flag)
		name, usage := Value(f)
		if name != c.name || usage != c.usage || !slices.Equal(Choices(f), c.choices) || Repeats(f) != c.repeats {
			t.Errorf("--%s: %q %q %v %v; want %q %q %v %v", c.flag, name, usage, Choices(f), Repeats(f), c.name, c.usage, c.choices, c.repeats)
		}
	}
}
