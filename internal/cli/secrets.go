package cli

import (
	"github.com/gns-guard/gns-guard/internal/secrets"
)

// Nothing a verb writes carries a secret the process holds
// (docs/ledger.md#no-secret-in-a-write): the verb refuses the write,
// naming the secret and where it is; the client refuses any request that
// would carry one all the same.

// secretEnv are the environment variables that hold the tokens and keys
// a verb may hold.
var secretEnv = []string{"GITEA_TOKEN", "GITHUB_TOKEN", "GNS_GUARD_TOKEN", "GNS_GUARD_ADMIN_TOKEN", LedgerKeyEnv}

// heldSecrets are the tokens and keys the verb holds: its --token, the
// variables of secretEnv and the one --ledger-key-env names.
func (f *issueFlags) heldSecrets(env Env) []secrets.Secret {
	out := []secrets.Secret{{Name: "--token", Value: f.token}}
	for _, name := range append(secretEnv, f.ledgerKeyEnv) {
		if name != "" {
			out = append(out, secrets.Secret{Name: name, Value: env.Getenv(name)})
		}
	}
	return out
}
