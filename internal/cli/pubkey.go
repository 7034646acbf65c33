package cli

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/gns-guard/gns-guard/internal/offline"
)

// LedgerKeyEnv is the environment variable pubkey reads the ledger-key
// secret from (never a flag: a flag shows in the process list).
const LedgerKeyEnv = "GNS_GUARD_LEDGER_KEY"

// pubkeyReport is the JSON form of `pubkey`.
type pubkeyReport struct {
	PublicKey string `json:"public_key"`
	KeyID     string `json:"key_id"`
}

// pubkeyFlags declares the flags of `pubkey`.
func pubkeyFlags(fs *flag.FlagSet) options {
	return formatOnly(fs, "pubkey", keyFormatHelp, func(pos []string) error {
		return usageError("pubkey takes no arguments (the secret is read from $%s), got %s", LedgerKeyEnv, strings.Join(pos, " "))
	})
}

// runPubkey prints the public key of the ledger-key in $GNS_GUARD_LEDGER_KEY
// as one line: exactly the value to publish as ledger-public-key in
// .gitea/gns-guard.yml, with which anyone verifies the guard's signed
// ledger records, holding no secret.
func runPubkey(_ context.Context, o *formatOptions, env Env) error {
	secret := strings.TrimSpace(env.Getenv(LedgerKeyEnv))
	if secret == "" {
		return usageError("pubkey: $%s is empty or not set: export the ledger-key secret (what gns-guard keygen printed) into it", LedgerKeyEnv)
	}
	pub, id, err := offline.PublicKey(secret)
	if err != nil {
		return usageError("pubkey: $%s: %v", LedgerKeyEnv, err)
	}
	if o.format == "json" {
		return printJSON(env, pubkeyReport{PublicKey: pub, KeyID: id})
	}
	_, err = fmt.Fprintln(env.Stdout, pub)
	return err
}
