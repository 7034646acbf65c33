package fakeforge

import (
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gns-guard/gns-guard/internal/forge"
	"github.com/gns-guard/gns-guard/internal/port"
	"github.com/gns-guard/gns-guard/internal/secrets"
)

// Client is one token's client of the server: every role of the port.
type Client struct {
	s        *Server
	user     string
	rejected bool // a token the server does not know: 401 to everything
	requests atomic.Int64
	answered atomic.Bool
	mu       sync.Mutex
	held     secrets.Set
}

var _ port.Forge = (*Client)(nil)

// User is the login the client acts as.
func (c *Client) User() string { return c.user }

// Requests counts the requests this client sent.
func (c *Client) Requests() int64 { return c.requests.Load() }

// HoldSecrets makes the client refuse any write that carries one of ss.
func (c *Client) HoldSecrets(ss ...secrets.Secret) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.held.Add(ss...)
}

// ServerTime is the server's clock, to the second, once it answered the
// client; the zero time before.
func (c *Client) ServerTime() time.Time {
	if !c.answered.Load() {
		return time.Time{}
	}
	return c.s.now().Truncate(time.Second)
}

// begin starts serving one request of method (verb path): it runs the
// faults' Before hooks, takes the server's lock and counts the request.
// On success the lock is held, for the caller to release; the error (the
// fault's, or 401 for a token the server does not know) comes without it.
func (c *Client) begin(method, verb, path string) error {
	s := c.s
	s.mu.Lock()
	faults := s.take(method)
	s.mu.Unlock()
	for _, f := range faults {
		if f.Before != nil {
			f.Before()
		}
	}
	s.mu.Lock()
	s.calls[method]++
	s.requests++
	c.requests.Add(1)
	c.answered.Store(true)
	for _, f := range faults {
		if err := failure(f, verb, path); err != nil {
			s.mu.Unlock()
			return err
		}
	}
	if c.rejected {
		s.mu.Unlock()
		return status(verb, path, http.StatusUnauthorized)
	}
	return nil
}

// more counts n more requests of a call already begun.
func (c *Client) more(n int) {
	c.s.requests += int64(n)
	c.requests.Add(int64(n))
}

// need refuses (403) a user below permission want.
func (c *Client) need(want, verb, path string) error {
	if c.s.may(c.user, want) {
		return nil
	}
	return status(verb, path, http.StatusForbidden)
}

// carry refuses a write whose texts hold a secret the client holds, as
// the adapter does before sending.
func (c *Client) carry(verb, path string, texts ...string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range texts {
		if f, ok := c.held.Find(t); ok {
			return &forge.SecretError{Method: verb, Path: "/api/v1" + path, Found: f}
		}
	}
	return nil
}
