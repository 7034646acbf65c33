package flagdoc

import (
	"errors"
	"flag"
	"fmt"
	"regexp"
	"strings"

	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/finding"
)

// Parse parses flags that may stand before or after the positional
// arguments, and returns the positional ones. -h calls fs.Usage and
// returns flag.ErrHelp; any other mistake is one usage error.
func Parse(fs *flag.FlagSet, args []string) ([]string, error) {
	help := fs.Usage
	fs.Usage = func() {} // the flag package calls it on every error
	defer func() { fs.Usage = help }()
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				help()
				return nil, err
			}
			return nil, &exitcode.UsageError{Err: fmt.Errorf("%s: %s", fs.Name(), mistake(err.Error(), args, fs))}
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// mistake is the flag package's error as a person reads it: the flag as
// typed, the closest flag for one unknown, and what a number flag takes.
func mistake(msg string, args []string, fs *flag.FlagSet) string {
	if name, unknown := strings.CutPrefix(msg, "flag provided but not defined: "); unknown {
		var names []string
		fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
		return asTyped("unknown flag "+name, args) + DidYouMean(strings.TrimLeft(name, "-"), names, "--")
	}
	msg = strings.Replace(msg, ": parse error", ": not a whole number", 1)
	msg = strings.Replace(msg, ": value out of range", ": out of range (a whole number up to 9223372036854775807)", 1)
	return asTyped(msg, args)
}

// flagInMessage is a flag as the flag package names it in an error: one
// dash, whatever was typed.
var flagInMessage = regexp.MustCompile(`(^|[ (])-([A-Za-z0-9][A-Za-z0-9_.-]*)`)

// asTyped puts the flag an error names back as typed among args (--bogus,
// not -bogus); one not found there gets two dashes, as the help spells it.
func asTyped(msg string, args []string) string {
	done := false
	return flagInMessage.ReplaceAllStringFunc(msg, func(m string) string {
		if done {
			return m
		}
		done = true
		lead, name := m[:len(m)-len(strings.TrimLeft(m, " ("))], strings.TrimLeft(m, " (-")
		for _, a := range args {
			if a == "--" {
				break
			}
			typed, _, _ := strings.Cut(a, "=")
			if strings.HasPrefix(typed, "-") && strings.TrimLeft(typed, "-") == name {
				return lead + typed
			}
		}
		return lead + "--" + name
	})
}

// DidYouMean is " (did you mean X?)", X prefix and the candidate closest
// to word, or "" when none is close (finding.Nearest).
func DidYouMean(word string, candidates []string, prefix string) string {
	best, ok := finding.Nearest(word, candidates)
	if !ok {
		return ""
	}
	return " (did you mean " + prefix + best + "?)"
}
