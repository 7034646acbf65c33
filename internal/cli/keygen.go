package cli

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/gns-guard/gns-guard/internal/offline"
)

// keygenReport is the JSON form of `keygen`.
type keygenReport struct {
	LedgerKey string `json:"ledger_key"`
}

// keygenFlags declares the flags of `keygen`.
func keygenFlags(fs *flag.FlagSet) options {
	return formatOnly(fs, "keygen", keyFormatHelp, func(pos []string) error {
		return usageError("keygen takes no arguments, got %s", strings.Join(pos, " "))
	})
}

// keyFormatHelp is the help of --format of the verbs that print a key.
const keyFormatHelp = "output format: `text|json` (text: the key, one line)"

// runKeygen prints a new ledger key: the value of the Actions secret
// GNS_GUARD_LEDGER_KEY, which the workflow passes as the ledger-key input.
// It prints the key and nothing else.
func runKeygen(_ context.Context, o *formatOptions, env Env) error {
	key, err := offline.NewKey()
	if err != nil {
		return cannotRun(err)
	}
	if o.format == "json" {
		return printJSON(env, keygenReport{LedgerKey: key})
	}
	_, err = fmt.Fprintln(env.Stdout, key)
	return err
}
