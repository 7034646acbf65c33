package cli

// Nothing a verb writes carries a secret the process holds
// (docs/ledger.md#no-secret-in-a-write): the verb refuses the write,
// naming the secret and where it is; the client refuses any request that
// would carry one all the same.

// secretEnv are the environment variables that hold the tokens and keys
// a verb may hold.
var secretEnv = []string{"GITEA_TOKEN", "GITHUB_TOKEN", "GNS_GUARD_TOKEN", "GNS_GUARD_ADMIN_TOKEN", LedgerKeyEnv}

// heldEnv are the variables whose values the verb holds, beside its
// --token: those of secretEnv and the one --ledger-key-env names.
func (f *issueFlags) heldEnv() []string { return append(secretEnv, f.ledgerKeyEnv) }
