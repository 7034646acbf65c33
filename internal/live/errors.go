package live

import (
	"context"
	"errors"
	"fmt"

	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/scopes"
)

// Where names who reads what, for failed requests' messages.
type Where struct {
	// Verb prefixes every message ("report"); "" in action mode.
	Verb string
	// Server is the server's URL and Repo its repository, OWNER/NAME.
	Server, Repo string
	// TokenHint fixes a rejected token: "check the token input".
	TokenHint string
	// TokenSource ("--token", "GITEA_TOKEN") names the token in refusals; ""
	// when none given.
	TokenSource string
	// Scopes reads e.g. "write:issue, read:repository and read:user".
	Scopes string
	// Token names the token when no TokenSource does ("the token
	// input"), and Needs says what it needs, for a refusal for want of
	// a scope ("GNS_GUARD_TOKEN, the token of ..., needs the scopes
	// ..."); without Needs, Scopes says it.
	Token, Needs string
	// RepoExists tells missing issue from missing repository (one request).
	RepoExists func(ctx context.Context) (bool, error)
}

// Error says why a request failed, for the person who sees it. An
// unreachable server, a rejected token or a refused permission is an
// exitcode.CannotRunError (exit 3); a 404 is a mistake in what was asked,
// an exitcode.UsageError (exit 2). what completes "could not ...": "read
// issue #7".
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
		msg = fmt.Errorf("%s%s", prefix, w.rejected(what))
	case errors.Is(err, issues.ErrForbidden):
		msg = fmt.Errorf("%s%s (%w)", prefix, w.refused(what, issues.MissingScope(err)), err)
	case errors.Is(err, issues.ErrNotFound):
		return &exitcode.UsageError{Err: fmt.Errorf("%scould not %s in %s: it does not exist, or the token cannot see it (HTTP 404)", prefix, what, w.Repo)}
	default:
		msg = fmt.Errorf("%scould not %s at %s: %w", prefix, what, w.Server, err)
	}
	return &exitcode.CannotRunError{Err: msg}
}

// rejected is the message for a 401.
func (w Where) rejected(what string) string {
	if w.TokenSource == "" && w.Verb != "" {
		return fmt.Sprintf("the server %s needs a token to %s (HTTP 401) and none was given: pass --token or set GITEA_TOKEN%s",
			w.Server, what, w.scopes(", a token with the scopes "))
	}
	from := ""
	if w.TokenSource != "" {
		from = " from " + w.TokenSource
	}
	hint := w.TokenHint
	if hint == "" {
		hint = "pass a valid one"
	}
	return fmt.Sprintf("the server %s rejected the token%s (HTTP 401) when trying to %s: it is wrong, expired or revoked; %s%s",
		w.Server, from, what, hint, w.scopes(", with the scopes "))
}

// refused is for a 403; se, when set, names the missing scope.
func (w Where) refused(what string, se *issues.ScopeError) string {
	token := "the token"
	switch {
	case w.TokenSource != "":
		token += " from " + w.TokenSource
	case w.Token != "":
		token = w.Token
	}
	switch {
	case se != nil && se.PublicOnly:
		return fmt.Sprintf("%s may not %s in %s (HTTP 403): it reaches public repositories and organisations only; %s", token, what, w.Repo, w.needs())
	case se != nil:
		return fmt.Sprintf("%s lacks %s, which it needs to %s in %s (HTTP 403): %s", token, scopes.Lacking(se.Missing), what, w.Repo, w.needs())
	case w.Scopes != "":
		return fmt.Sprintf("%s may not %s in %s (HTTP 403): %s needs a token with the scopes %s whose user may do this in the "+
			"repository", token, what, w.Repo, w.Verb, w.Scopes)
	}
	return fmt.Sprintf("%s may not %s in %s (HTTP 403): give it the access this needs", token, what, w.Repo)
}

// needs says what a scope refusal wants.
func (w Where) needs() string {
	switch {
	case w.Needs != "":
		return w.Needs
	case w.Scopes != "":
		return fmt.Sprintf("%s needs a token with the scopes %s", w.Verb, w.Scopes)
	}
	return "give it the scope"
}

// scopes is lead and the needed scopes, or "" when unknown.
func (w Where) scopes(lead string) string {
	if w.Scopes == "" {
		return ""
	}
	return lead + w.Scopes
}

// missing is exit 2, saying whether issue or repository is missing, if
// known.
func (w Where) missing(ctx context.Context, number int64) error {
	prefix := ""
	if w.Verb != "" {
		prefix = w.Verb + ": "
	}
	msg := fmt.Sprintf("issue #%d does not exist in %s", number, w.Repo)
	exists, err := true, error(nil)
	if w.RepoExists != nil {
		exists, err = w.RepoExists(ctx)
	}
	switch {
	case err == nil && !exists:
		msg = fmt.Sprintf("the repository %s does not exist on %s (or the token cannot see it)", w.Repo, w.Server)
	case err != nil || w.RepoExists == nil:
		msg += " (or the token cannot see it)"
	}
	return &exitcode.UsageError{Err: fmt.Errorf("%s%s", prefix, msg)}
}
