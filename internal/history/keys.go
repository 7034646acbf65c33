package history

import (
	"fmt"

	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/live"
)

// Keys are the public keys `history --verify` checks with: the given ones
// (--public-key), else the one published as ledger-public-key in where.
// None is a usage error that says how to publish it, the secret in
// $keyEnv.
func Keys(given []string, published, where, keyEnv string) (ledger.Keys, error) {
	if len(given) > 0 {
		keys, err := ledger.PublicKeys(given...)
		if err != nil {
			return keys, usageError("history: --public-key: %v", err)
		}
		return keys, nil
	}
	if published == "" {
		return ledger.Keys{}, usageError("history: --verify needs the guard's public key, and %s sets no ledger-public-key: "+
			"publish it — run 'gns-guard pubkey' with the ledger-key secret in $%s and set the line it prints as ledger-public-key in %s — "+
			"or pass it with --public-key", where, keyEnv, live.ConfigFile)
	}
	keys, err := ledger.PublicKeys(published)
	if err != nil {
		return keys, usageError("history: %s: ledger-public-key: %v", where, err)
	}
	return keys, nil
}

func usageError(format string, args ...any) error {
	return &exitcode.UsageError{Err: fmt.Errorf(format, args...)}
}
