package forge

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/gns-guard/gns-guard/internal/secrets"
)

// No request may carry a held secret (docs/ledger.md#no-secret-in-a-write):
// writes are checked before leaving.

// SecretError is a write refused because it carries a secret.
type SecretError struct {
	Method, Path string
	Found        secrets.Found
}

func (e *SecretError) Error() string {
	return fmt.Sprintf("%s %s was not sent: what it would write holds %s, a secret this process holds; nothing was written", e.Method, e.Path, e.Found)
}

// HoldSecrets adds secrets no request may carry; the token is held already.
func (c *Client) HoldSecrets(ss ...secrets.Secret) { c.held.add(ss...) }

// heldSecrets is a client's secrets, shared with its transport.
type heldSecrets struct {
	mu  sync.Mutex
	set secrets.Set
}

func (h *heldSecrets) add(ss ...secrets.Secret) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.set.Add(ss...)
}

func (h *heldSecrets) find(text string) (secrets.Found, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.set.Find(text)
}

// secretGuard refuses a request whose body carries a held secret.
type secretGuard struct {
	next http.RoundTripper
	held *heldSecrets
}

func (g *secretGuard) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body == nil || r.Method == http.MethodGet || r.Method == http.MethodHead {
		return g.next.RoundTrip(r)
	}
	data, err := io.ReadAll(r.Body)
	r.Body.Close()
	if err != nil {
		return nil, err
	}
	if f, ok := g.held.find(string(data)); ok {
		return nil, &SecretError{Method: r.Method, Path: r.URL.Path, Found: f}
	}
	sent := r.Clone(r.Context())
	sent.Body = io.NopCloser(bytes.NewReader(data))
	return g.next.RoundTrip(sent)
}
