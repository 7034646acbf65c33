package cli

import (
	"flag"
	"io"
	"strings"

	"github.com/gns-guard/gns-guard/internal/flagdoc"
	"github.com/gns-guard/gns-guard/internal/settings"
)

// newFlags returns a flag set for a verb. The flag package prints nothing
// itself: a mistake becomes one usage error (flagdoc.Parse), and -h prints
// the verb's help on standard output.
func newFlags(v verb, env Env) *flag.FlagSet {
	fs := flag.NewFlagSet(v.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() { v.doc().Help(env.Stdout, fs) }
	return fs
}

// doc is what the verb's help says beside its flags.
func (v verb) doc() flagdoc.Command {
	return flagdoc.Command{Name: v.name, Args: v.args, Required: v.required, Note: v.note, About: v.about, Example: v.example,
		Setting: isSettingFlag}
}

// usageLines are the verb's lines in the top-level usage.
func (v verb) usageLines() []string {
	fs := flag.NewFlagSet(v.name, flag.ContinueOnError)
	if v.flags != nil {
		v.flags(fs)
	}
	return v.doc().UsageLines(fs)
}

// isSettingFlag says a flag is one of the guard's settings (package
// settings declares them, with the setting's description as usage), not a
// verb's own flag of the same name (tokens' --encoding).
func isSettingFlag(f *flag.Flag) bool {
	s, ok := settings.Lookup(f.Name)
	return ok && s.Flag && strings.HasPrefix(f.Usage, s.Description)
}
