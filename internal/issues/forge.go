package issues

import (
	"errors"
	"strings"
)

// Errors every server's client (package port) wraps, for errors.Is.

// ErrConflict: the body changed since it was read.
var ErrConflict = errors.New("issue body changed since it was read (HTTP 409)")

// ErrForbidden is wrapped when the token lacks the permission.
var ErrForbidden = errors.New("the token is not allowed to do this (HTTP 403)")

// ErrUnreachable: no answer (a dropped connection, a timeout).
var ErrUnreachable = errors.New("the server did not answer")

// ErrNotFound: no such issue, comment or repository.
var ErrNotFound = errors.New("not found (HTTP 404)")

// ErrTooLarge: the answer exceeds what the read accepts.
var ErrTooLarge = errors.New("larger than the guard reads")

// ErrUnauthorized: HTTP 401, the token is wrong, expired or revoked.
var ErrUnauthorized = errors.New("the server rejected the token (HTTP 401)")

// ScopeError is a refusal (HTTP 403) of a request a scoped token may not
// make: Gitea checks a token's scopes before the user's rights, and says
// which scopes the route asks for. It matches ErrForbidden.
type ScopeError struct {
	// Missing are scopes the token lacks ("read:organization"); empty when
	// PublicOnly.
	Missing []string
	// PublicOnly: the token reaches only public repositories, and this is
	// not.
	PublicOnly bool
}

// Error says what the token lacks.
func (e *ScopeError) Error() string {
	if e.PublicOnly {
		return "the token reaches public repositories and organisations only (HTTP 403)"
	}
	what := "the scope "
	if len(e.Missing) > 1 {
		what = "the scopes "
	}
	return "the token lacks " + what + strings.Join(e.Missing, ", ") + " (HTTP 403)"
}

// Is makes a ScopeError match ErrForbidden.
func (e *ScopeError) Is(target error) bool { return target == ErrForbidden }

// MissingScope is err's ScopeError, or nil.
func MissingScope(err error) *ScopeError {
	var se *ScopeError
	if errors.As(err, &se) {
		return se
	}
	return nil
}
