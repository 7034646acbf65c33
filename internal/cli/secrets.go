package cli

import (
	"fmt"
	"strings"

	"github.com/gns-guard/gns-guard/internal/exitcode"
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

// refuseSecrets refuses (exit 1) a report whose writes carry a secret:
// the result comment, the body, a label or the assignee.
func refuseSecrets(o *reportOptions, env Env, step *reportStep) error {
	set := secrets.New(o.heldSecrets(env)...)
	if set.Len() == 0 || step.out == nil {
		return nil
	}
	texts := []struct{ where, text string }{{"the result comment", step.comment}, {"the issue body", step.out.Body}, {"a label", strings.Join(step.out.Add, "\n")}}
	if a := o.rep.Assignee; a != nil {
		texts = append(texts, struct{ where, text string }{"the assignee", *a})
	}
	for _, t := range texts {
		if f, ok := set.Find(t.text); ok {
			return &exitcode.ViolationError{Err: fmt.Errorf("report: issue #%d: refused, nothing was written: %s would hold %s, a secret this process holds (the --result-file, --action or another text given carries it); remove it and report again", o.issue, t.where, f)}
		}
	}
	return nil
}
