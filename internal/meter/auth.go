package meter

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/gns-guard/gns-guard/internal/access"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/metering"
	"github.com/gns-guard/gns-guard/internal/port"
	"github.com/gns-guard/gns-guard/internal/scopes"
)

// Client is Gitea as an agent's token sees it: its login, the
// repository's writers and id, and the issue, decided as the guard would.
type Client interface {
	port.IssueReader
	port.Permissions
	Repository(ctx context.Context) (port.Repository, error)
}

// Connect makes a client of repository owner/name with token.
type Connect func(server, token, owner, name string) (Client, error)

// login is a resolved token: user, write access and client.
type login struct {
	name     string
	writer   bool
	refusal  *metering.Refusal
	client   Client
	resolved bool
}

// agentToken is the SDK's key: x-api-key (Anthropic) or Authorization:
// Bearer (OpenAI).
func agentToken(r *http.Request) string {
	if k := strings.TrimSpace(r.Header.Get("X-Api-Key")); k != "" {
		return k
	}
	if v, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return strings.TrimSpace(v)
	}
	return ""
}

// resolve asks Gitea, with the token itself, whose it is and whether it
// may write owner/name's issues (package access). Kept LoginTTL by the
// token's hash; a refusal too, so a flood does not reach Gitea.
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
				Message: "Gitea rejected the key: the API key is your Gitea token (scopes " + scopes.Agent.List() + "), not a provider's key"}}, nil
		case err != nil:
			return login{}, err
		}
		listed, err := c.Writers(ctx)
		unread := errors.Is(err, issues.ErrNotFound) || errors.Is(err, issues.ErrForbidden)
		if err != nil && !unread {
			return login{}, err
		}
		l := login{name: who, client: c, resolved: true, writer: access.Writers{Owner: owner, Listed: listed}.Can(who)}
		if !l.writer {
			l.refusal = notWriter(who, owner+"/"+name, unread)
		}
		return l, nil
	})
}

// notWriter refuses login, who cannot write repo's issues; unread: Gitea
// hid the writers from the token.
func notWriter(login, repo string, unread bool) *metering.Refusal {
	why := "Gitea does not list it among the repository's assignees"
	if unread {
		why = "Gitea does not show this token the repository's assignees (the token needs read:repository, and the account access to the repository)"
	}
	return &metering.Refusal{Status: 403, Kind: metering.KindPermission, Rule: "meter-auth",
		Message: fmt.Sprintf("%s cannot write the issues of %s: %s. "+
			"Only the repository's writers spend through the meter; %s makes an account one", login, repo, why, access.Grants)}
}
