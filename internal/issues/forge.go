package issues

import "errors"

// The errors a client of the server (package port) wraps, whatever the
// server: the shell tells them apart with errors.Is.

// ErrConflict is wrapped by a body edit when the body changed since it was read.
var ErrConflict = errors.New("issue body changed since it was read (HTTP 409)")

// ErrForbidden is wrapped when the token lacks the permission.
var ErrForbidden = errors.New("the token is not allowed to do this (HTTP 403)")

// ErrUnreachable is matched by the error of a request that got no answer
// (a dropped connection, a timeout).
var ErrUnreachable = errors.New("the server did not answer")

// ErrNotFound is wrapped when the issue, comment or repository does not exist.
var ErrNotFound = errors.New("not found (HTTP 404)")

// ErrTooLarge is wrapped when what a read returns is larger than it
// reads at most.
var ErrTooLarge = errors.New("larger than the guard reads")

// ErrUnauthorized is wrapped when the server rejected the token itself
// (HTTP 401): wrong, expired or revoked.
var ErrUnauthorized = errors.New("the server rejected the token (HTTP 401)")
