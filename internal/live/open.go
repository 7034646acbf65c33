package live

import (
	"context"
	"errors"

	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/port"
	"github.com/gns-guard/gns-guard/internal/scopes"
	"github.com/gns-guard/gns-guard/internal/secrets"
	"github.com/gns-guard/gns-guard/internal/settings"
)

// ActionsUser is the login the guard writes as unless its signed ledger
// names another.
const ActionsUser = issues.ActionsUser

// Dial is how a verb reached a repository, as its messages name it.
type Dial struct {
	Verb, Server, Repo string
	// TokenSource says where the token came from (--token, GITEA_TOKEN).
	TokenSource string
	// Guard is the guard's login when given (--guard-user).
	Guard string
	// LedgerKey verifies the guard's records; nil: trusted by author.
	LedgerKey []byte
}

// Open is the reader of the repository client serves.
func Open(d Dial, client port.Forge) *Reader {
	return &Reader{
		Forge:  client,
		Admin:  client,
		Client: client,
		Where: Where{Verb: d.Verb, Server: d.Server, Repo: d.Repo, TokenSource: d.TokenSource,
			TokenHint: "pass a valid one with --token or GITEA_TOKEN", Scopes: scopes.Join(scopes.Of(d.Verb)), RepoExists: repoExists(client)},
		Guard: d.Guard,
		Keys:  ledger.SecretKeys(d.LedgerKey),
	}
}

// repoExists asks the server whether the client's repository exists.
func repoExists(client port.PostureReader) func(ctx context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		_, err := client.Repository(ctx)
		if errors.Is(err, issues.ErrNotFound) {
			return false, nil
		}
		return err == nil, err
	}
}

// LedgerKey is the secret in the variable a verb's --ledger-key-env
// names; empty or weak is a usage error.
func LedgerKey(verb, name string, getenv func(string) string) ([]byte, error) {
	key := []byte(getenv(name))
	if len(key) == 0 {
		return nil, usageError("%s: --ledger-key-env %s: the variable is empty or not set", verb, name)
	}
	if err := ledger.CheckKey(key); err != nil {
		return nil, usageError("%s: --ledger-key-env %s: %v", verb, name, err)
	}
	return key, nil
}

// Held are the secrets a verb holds: its --token and the variables named
// (an empty name is skipped).
func Held(token string, getenv func(string) string, names ...string) []secrets.Secret {
	out := []secrets.Secret{{Name: "--token", Value: token}}
	for _, name := range names {
		if name != "" {
			out = append(out, secrets.Secret{Name: name, Value: getenv(name)})
		}
	}
	return out
}

// Resolve is Config for a verb: its flags over the file (or o.Local),
// the ledger-key given, if any, and the reader keyed with what it
// resolved (the published public key verifies without the secret).
func (r *Reader) Resolve(ctx context.Context, o ConfigOptions, ledgerKey []byte) (settings.Resolved, error) {
	res, _, err := r.Config(ctx, nil, o)
	if err != nil {
		return res, err
	}
	if ledgerKey != nil {
		res.Config.LedgerKey = ledgerKey
	}
	r.Keys = ledger.ConfigKeys(res.Config)
	return res, nil
}
