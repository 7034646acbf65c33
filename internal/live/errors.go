package live

import (
	"errors"
	"fmt"

	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/issues"
)

// Where says who reads what, for the messages of failed requests.
type Where struct {
	// Verb prefixes every message ("report"); "" in action mode.
	Verb string
	// Server is the server's URL and Repo its repository, OWNER/NAME.
	Server, Repo string
	// TokenHint says where the token comes from, for a rejected one:
	// "check --token, GITEA_TOKEN or GITHUB_TOKEN".
	TokenHint string
}

// Error says why a request failed, for the person who sees it: an
// unreachable server, a rejected token, a refused permission or a missing
// issue cannot be worked around, so it is an exitcode.CannotRunError (exit 3).
// what completes "could not ...": "read issue #7".
func (w Where) Error(what string, err error) error {
	prefix := ""
	if w.Verb != "" {
		prefix = w.Verb + ": "
	}
	var msg error
	switch {
	case errors.Is(err, issues.ErrUnreachable):
		msg = fmt.Errorf("%scould not reach the server %s to %s: %w", prefix, w.Server, what, err)
	case errors.Is(err, issues.ErrUnauthorized):
		msg = fmt.Errorf("%sthe server %s rejected the token (HTTP 401) when trying to %s; %s", prefix, w.Server, what, w.TokenHint)
	case errors.Is(err, issues.ErrForbidden):
		msg = fmt.Errorf("%sthe token may not %s in %s (HTTP 403): give it the access this needs (%w)", prefix, what, w.Repo, err)
	case errors.Is(err, issues.ErrNotFound):
		msg = fmt.Errorf("%scould not %s in %s: not found, or the token cannot see it (HTTP 404)", prefix, what, w.Repo)
	default:
		msg = fmt.Errorf("%scould not %s at %s: %w", prefix, what, w.Server, err)
	}
	return &exitcode.CannotRunError{Err: msg}
}
