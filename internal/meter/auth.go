package meter

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/metering"
	"github.com/gns-guard/gns-guard/internal/port"
)

// Client is what the meter asks Gitea with an agent's token: who it is,
// what it may do, and the issue it spends on.
type Client interface {
	port.IssueReader
	port.Permissions
}

// Connect makes a client of repository owner/name with token.
type Connect func(server, token, owner, name string) (Client, error)

// login is a token resolved: its user, whether it may write the
// repository, and the client that reads with it.
type login struct {
	name     string
	writer   bool
	refusal  *metering.Refusal
	client   Client
	resolved bool
}

// agentToken is the key an SDK sent: Authorization: Bearer (OpenAI's
// clients) or x-api-key (Anthropic's); the meter accepts either.
func agentToken(r *http.Request) string {
	if k := strings.TrimSpace(r.Header.Get("X-Api-Key")); k != "" {
		return k
	}
	if v, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return strings.TrimSpace(v)
	}
	return ""
}

// resolve finds who token belongs to and whether it may write
// owner/name: two requests to Gitea, kept for LoginTTL by the token's
// hash (a refused token too, briefly, so a flood does not reach Gitea).
func (m *Meter) resolve(ctx context.Context, token, owner, name string) (login, error) {
	if token == "" {
		return login{refusal: &metering.Refusal{Status: 401, Kind: metering.KindAuth, Rule: "meter-auth",
			Message: "no key: give the SDK your own Gitea token as its API key (sent as Authorization: Bearer or x-api-key)"}}, nil
	}
	sum := sha256.Sum256([]byte(token))
	key := hex.EncodeToString(sum[:]) + " " + strings.ToLower(owner+"/"+name)
	return m.logins.get(key, func() (login, error) {
		c, err := m.o.Connect(m.o.Server, token, owner, name)
		if err != nil {
			return login{}, err
		}
		who, err := c.Self(ctx)
		switch {
		case errors.Is(err, issues.ErrUnauthorized):
			return login{resolved: true, refusal: &metering.Refusal{Status: 401, Kind: metering.KindAuth, Rule: "meter-auth",
				Message: "Gitea rejected the key: the API key is your Gitea token (read:user, read:issue, read:repository), not a provider's key"}}, nil
		case err != nil:
			return login{}, err
		}
		perm, err := c.Permission(ctx, who)
		if err != nil && !errors.Is(err, issues.ErrNotFound) && !errors.Is(err, issues.ErrForbidden) {
			return login{}, err
		}
		l := login{name: who, client: c, resolved: true, writer: perm == "write" || perm == "admin" || perm == "owner"}
		if !l.writer {
			l.refusal = &metering.Refusal{Status: 403, Kind: metering.KindPermission, Rule: "meter-auth",
				Message: fmt.Sprintf("%s may not write %s/%s (permission %q): only the repository's writers spend through the meter", who, owner, name, perm)}
		}
		return l, nil
	})
}

// mayActAs says whether login may spend as agent: the setting agents maps
// agent names to the Gitea logins that may speak as them
// (docs/contract.md#4b-the-trusted-ledger); with
// no map, every account with write access to the repository (resolve
// checked it) may spend as any agent. A call that names no agent (the
// header is optional) is one of login's own agents'.
func mayActAs(cfg config.Config, login, agent string) bool {
	a := issues.Authors{Known: true, Writers: []string{login}, Agents: cfg.Agents}
	if agent != "" || !a.Mapped() {
		return a.SpeaksAs(login, agent)
	}
	for name := range cfg.Agents {
		if a.SpeaksAs(login, name) {
			return true
		}
	}
	return false
}
