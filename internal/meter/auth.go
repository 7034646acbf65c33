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
	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/live"
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

// login is a resolved token: user, write access and client. refusal
// refuses the token outright; notWriter is why a non-writer may not spend
// in the ungated posture (nil for a writer).
type login struct {
	name      string
	writer    bool
	refusal   *metering.Refusal
	notWriter *metering.Refusal
	client    Client
	resolved  bool
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
// may write owner/name's issues (package access); for a non-writer, the
// posture too. Kept LoginTTL by the token's hash; a refusal too, so a
// flood does not reach Gitea.
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
			l.notWriter = notWriter(who, owner+"/"+name, unread)
			if l.refusal, err = m.nonWriter(ctx, l, owner+"/"+name); err != nil {
				return login{}, err
			}
		}
		return l, nil
	})
}

// nonWriter is why l, who cannot write repo's issues, is refused: in the
// ungated posture always, in the gated one unless the agents setting maps
// it. A settings file the token cannot read, or that is invalid, leaves
// the posture unknown: refused as ungated.
func (m *Meter) nonWriter(ctx context.Context, l login, repo string) (*metering.Refusal, error) {
	res, _, err := m.reader(l.client, repo).Config(ctx, nil, live.ConfigOptions{})
	var ue *exitcode.UsageError
	switch {
	case errors.As(err, &ue), errors.Is(err, issues.ErrForbidden), errors.Is(err, issues.ErrNotFound):
		return l.notWriter, nil
	case err != nil:
		return nil, err
	}
	return l.mayNotSpend(res.Config, repo), nil
}

// mayNotSpend is why l may not spend on repo, configured cfg, or nil.
// Ungated, the repository's writers spend; gated, the logins the agents
// setting maps to an agent, writers or not (docs/meter.md#in-the-gated-posture).
func (l login) mayNotSpend(cfg config.Config, repo string) *metering.Refusal {
	if !cfg.Gated() {
		return l.notWriter
	}
	posture := fmt.Sprintf("%s runs the gated posture (gate-account %s), where only a login the setting agents maps to an agent "+
		"spends through the meter", repo, cfg.GateAccount)
	switch {
	case len(cfg.Agents) == 0:
		return &metering.Refusal{Status: 403, Kind: metering.KindPermission, Rule: "meter-auth", Message: fmt.Sprintf(
			"%s may not spend on %s: %s, and agents maps none: a person adds NAME: LOGIN under agents in .gitea/gns-guard.yml",
			l.name, repo, posture)}
	case !access.ActsAs(cfg.Agents, l.name, ""):
		return &metering.Refusal{Status: 403, Kind: metering.KindPermission, Rule: "meter-auth", Message: fmt.Sprintf(
			"%s may not spend on %s: %s, and agents maps no agent to %s", l.name, repo, posture, l.name)}
	}
	return nil
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
