package cli

import (
	"context"
	"flag"

	"github.com/gns-guard/gns-guard/internal/offline"
)

// rulesFlags declares the flags of `rules`.
func rulesFlags(fs *flag.FlagSet) options {
	return formatOnly(fs, "rules", "output format: `text|json`", nil)
}

// runRules lists every rule the guard applies, from the rule table itself.
func runRules(_ context.Context, o *formatOptions, env Env) error {
	if o.format == "json" {
		return printJSON(env, offline.Rules())
	}
	return offline.WriteRules(env.Stdout, offline.Rules())
}
