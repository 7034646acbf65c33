package flagdoc

import (
	"flag"
	"regexp"
	"strings"
)

// Value is the name of a flag's value and its usage with the back quotes
// taken out: "the repository, `OWNER/NAME`" names OWNER/NAME. A flag
// that names none is named by its type: TEXT, N; a bool flag takes no
// value ("").
func Value(f *flag.Flag) (name, usage string) {
	name, usage = flag.UnquoteUsage(f)
	switch name {
	case "":
	case "string":
		name = "TEXT"
	case "int", "uint", "float":
		name = "N"
	case "value":
		name = "VALUE"
	}
	return name, usage
}

// choice is a word a flag may take.
var choice = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

// Choices are the words a flag takes when its value's name lists them:
// `text|json` takes text or json. Nil when the flag takes any value.
func Choices(f *flag.Flag) []string {
	name, _ := Value(f)
	words := strings.Split(name, "|")
	if len(words) < 2 {
		return nil
	}
	for _, w := range words {
		if !choice.MatchString(w) {
			return nil
		}
	}
	return words
}

// Repeats says a flag may be given more than once, each value kept: its
// value is neither a bool nor one a flag.Getter reads back whole.
func Repeats(f *flag.Flag) bool {
	if IsBool(f) {
		return false
	}
	_, ok := f.Value.(flag.Getter)
	return !ok
}

// IsBool says a flag takes no value (--dry-run).
func IsBool(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}
