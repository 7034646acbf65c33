package cli

import (
	"flag"

	"github.com/gns-guard/gns-guard/internal/finding"
)

// didYouMean is " (did you mean X?)" for the candidate closest to word, or
// "" when none is close (finding.Nearest: the one measure of a typo).
func didYouMean(word string, candidates []string, prefix string) string {
	best, ok := finding.Nearest(word, candidates)
	if !ok {
		return ""
	}
	return " (did you mean " + prefix + best + "?)"
}

// flagNames are the names of a flag set's flags.
func flagNames(fs *flag.FlagSet) []string {
	var out []string
	fs.VisitAll(func(f *flag.Flag) { out = append(out, f.Name) })
	return out
}
