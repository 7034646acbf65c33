package forge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"code.gitea.io/sdk/gitea"

	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/port"
	"github.com/gns-guard/gns-guard/internal/scopes"
	"github.com/gns-guard/gns-guard/internal/secrets"
)

// DefaultTimeout bounds each HTTP request (connection, headers and body).
const DefaultTimeout = 30 * time.Second

// maxErrorBody bounds the response body kept in an HTTPError.
const maxErrorBody = 2 << 10

// MaxAnswer bounds every answer the client reads: a longer one fails with a
// *TooLargeError before it is all read. The largest the guard needs is a
// timeline page of 50 comments of 65,536 characters, each escaped as
// \uXXXX: about 19 MiB plus metadata. 32 MiB leaves half again on top.
// Longer answers are read around the cut (bounded.go).
const MaxAnswer = 32 << 20

// userAgent is the User-Agent header of every request.
const userAgent = "gns-guard"

// Client serves one Gitea repository, safe for concurrent use.
type Client struct {
	base     string // server root, no trailing slash: http://host:port[/prefix]
	token    string
	owner    string
	repo     string
	http     *http.Client
	requests *atomic.Int64
	date     *atomic.Int64 // Unix seconds of the last answer's Date header
	splits   *atomic.Int64 // requests spent reading around entries too large to read
	held     *heldSecrets  // what no request it sends may carry
}

// Client implements every role of the port.
var _ port.Forge = (*Client)(nil)

// Option configures New.
type Option func(*config)

type config struct {
	timeout   time.Duration
	maxAnswer int64
}

// WithTimeout sets the timeout of each HTTP request (default DefaultTimeout).
func WithTimeout(d time.Duration) Option { return func(c *config) { c.timeout = d } }

// WithMaxAnswer caps answer bodies; n ≤ 0 keeps MaxAnswer.
func WithMaxAnswer(n int64) Option {
	return func(c *config) {
		if n > 0 {
			c.maxAnswer = n
		}
	}
}

// New returns a client for owner/repo on the Gitea server at baseURL, the
// server root (http://127.0.0.1:3000); a trailing "/api/v1" is accepted and
// stripped. It makes no request: the SDK's start-up version probe is turned
// off.
func New(baseURL, token, owner, repo string, opts ...Option) (*Client, error) {
	cfg := config{timeout: DefaultTimeout, maxAnswer: MaxAnswer}
	for _, o := range opts {
		o(&cfg)
	}
	base, err := normalizeBase(baseURL)
	if err != nil {
		return nil, err
	}
	if owner == "" || repo == "" || strings.Contains(owner, "/") || strings.Contains(repo, "/") {
		return nil, fmt.Errorf("forge: invalid repository %q/%q", owner, repo)
	}
	c := &Client{
		base:     base,
		token:    token,
		owner:    owner,
		repo:     repo,
		requests: new(atomic.Int64),
		date:     new(atomic.Int64),
		splits:   new(atomic.Int64),
		held:     &heldSecrets{},
	}
	c.held.add(secrets.Secret{Name: "the client's own token", Value: token})
	c.http = &http.Client{
		Timeout: cfg.timeout,
		Transport: &retrying{pause: 300 * time.Millisecond,
			next: &countingTransport{next: &secretGuard{next: http.DefaultTransport, held: c.held}, n: c.requests, date: c.date, max: cfg.maxAnswer}},
	}
	if _, err := c.sdk(context.Background()); err != nil {
		return nil, err
	}
	return c, nil
}

// Connect is New as the port's Forge, for the shell that wires it.
func Connect(baseURL, token, owner, repo string) (port.Forge, error) {
	c, err := New(baseURL, token, owner, repo)
	if err != nil {
		return nil, err
	}
	return c, nil
}

func normalizeBase(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "", fmt.Errorf("forge: invalid server URL %q: %w", raw, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("forge: invalid server URL %q: want http(s)://host[:port]", raw)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("forge: invalid server URL %q: no credentials, query or fragment allowed", u.Redacted())
	}
	p := strings.TrimRight(u.Path, "/")
	p = strings.TrimSuffix(p, "/api/v1")
	u.Path, u.RawPath = strings.TrimRight(p, "/"), ""
	return u.String(), nil
}

// BaseURL returns the server root the client talks to.
func (c *Client) BaseURL() string { return c.base }

// Requests counts attempts that reached the transport, failed or not.
func (c *Client) Requests() int64 { return c.requests.Load() }

// ServerTime is the last answer's Date header, to the second; zero before
// any.
func (c *Client) ServerTime() time.Time {
	if s := c.date.Load(); s > 0 {
		return time.Unix(s, 0)
	}
	return time.Time{}
}

// countingTransport counts, notes the server's clock, caps bodies.
type countingTransport struct {
	next http.RoundTripper
	n    *atomic.Int64
	date *atomic.Int64
	max  int64
}

func (t *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	t.n.Add(1)
	resp, err := t.next.RoundTrip(r)
	if err != nil {
		return resp, err
	}
	if d, derr := http.ParseTime(resp.Header.Get("Date")); derr == nil {
		t.date.Store(d.Unix())
	}
	if resp.Body != nil {
		tooLarge := &TooLargeError{Method: r.Method, Path: r.URL.Path, Limit: t.max}
		if resp.ContentLength > t.max && r.Context().Value(streamedKey{}) == nil {
			// Refused unread: what the server announced is too much.
			resp.Body.Close()
			resp.Body = &cappedBody{err: tooLarge}
		} else {
			resp.Body = &cappedBody{rc: resp.Body, left: t.max, err: tooLarge}
		}
	}
	return resp, nil
}

// streamedKey marks a streamed read (getCapped): an over-long answer is
// still read up to the cap.
type streamedKey struct{}

// TooLargeError is an answer whose body is longer than the client reads
// (MaxAnswer). Where the guard reads the issue and its timeline, it reads
// what comes before the cut and around it (see getCapped); anywhere else
// it is a failure to run (exit 3).
type TooLargeError struct {
	Method string
	Path   string // URL path of the request (never the token)
	Limit  int64  // bytes
}

// Error names the request and the limit.
func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s %s: the answer is longer than %d bytes (%d MiB), the most the guard reads", e.Method, e.Path, e.Limit, e.Limit>>20)
}

// Is makes a TooLargeError match issues.ErrTooLarge.
func (e *TooLargeError) Is(target error) bool { return target == issues.ErrTooLarge }

// cappedBody reads at most left bytes, then fails with err: left bytes
// exactly read whole.
type cappedBody struct {
	rc   io.ReadCloser // nil: the answer was refused unread
	left int64
	err  error
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.rc == nil {
		return 0, b.err
	}
	if b.left < 0 {
		return 0, b.err
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n + int(b.left), b.err // keep the first left bytes, drop the one over
	}
	return n, err
}

func (b *cappedBody) Close() error {
	if b.rc == nil {
		return nil
	}
	return b.rc.Close()
}

// sdk returns an SDK client bound to ctx. The SDK takes its context per
// client, so each call gets a cheap client of its own sharing the HTTP
// client (and its counter); SetGiteaVersion("") keeps it from asking the
// server for its version.
func (c *Client) sdk(ctx context.Context) (*gitea.Client, error) {
	sc, err := gitea.NewClient(c.base,
		gitea.SetGiteaVersion(""),
		gitea.SetHTTPClient(c.http),
		gitea.SetToken(c.token),
		gitea.SetUserAgent(userAgent),
		gitea.SetContext(ctx),
	)
	if err != nil {
		return nil, fmt.Errorf("forge: %w", err)
	}
	return sc, nil
}

// repoPath is /repos/{owner}/{repo} with both escaped, relative to /api/v1.
func (c *Client) repoPath() string {
	return "/repos/" + url.PathEscape(c.owner) + "/" + url.PathEscape(c.repo)
}

// HTTPError unwraps 401, 403, 404, 409 to issues.ErrUnauthorized,
// ErrForbidden, ErrNotFound, ErrConflict.
type HTTPError struct {
	Method string
	Path   string // URL path of the request, e.g. /api/v1/repos/o/r/issues/1 (never the token)
	Status int
	Body   string // the start of the answer's body (at most 2 KiB)
	// scope is what a 403 says the token lacks, or nil.
	scope *issues.ScopeError
}

// maxShownBody bounds the error body Error shows.
const maxShownBody = 300

// Error names request and status, never the token, and the answer's
// start on one line: a proxy's error page can be long HTML.
func (e *HTTPError) Error() string {
	msg := fmt.Sprintf("%s %s: HTTP %d %s", e.Method, e.Path, e.Status, http.StatusText(e.Status))
	if s := e.Unwrap(); s != nil {
		msg = fmt.Sprintf("%s %s: %v", e.Method, e.Path, s)
	}
	if b := strings.Join(strings.Fields(e.Body), " "); b != "" {
		if len(b) > maxShownBody {
			b = strings.ToValidUTF8(b[:maxShownBody], "") + "…"
		}
		msg += ": " + b
	}
	return msg
}

// Unwrap returns the guard sentinel matching the status, or nil.
func (e *HTTPError) Unwrap() error {
	switch e.Status {
	case http.StatusForbidden:
		if e.scope != nil {
			return e.scope
		}
		return issues.ErrForbidden
	case http.StatusNotFound:
		return issues.ErrNotFound
	case http.StatusConflict:
		return issues.ErrConflict
	case http.StatusUnauthorized:
		return issues.ErrUnauthorized
	}
	return nil
}

// UnreachableError: no HTTP answer (failed, cut, timed out); reported "could
// not reach URL" (exit 3).
type UnreachableError struct {
	URL    string // the server root
	Method string
	Path   string
	Err    error // the transport error
}

// Error starts with "could not reach <server root>".
func (e *UnreachableError) Error() string {
	return fmt.Sprintf("could not reach %s: %s %s: %v", e.URL, e.Method, e.Path, e.Err)
}

// Unwrap returns the transport error.
func (e *UnreachableError) Unwrap() error { return e.Err }

// Is makes an UnreachableError match issues.ErrUnreachable.
func (e *UnreachableError) Is(target error) bool { return target == issues.ErrUnreachable }

// transportError keeps the caller's cancellation; else the server was
// unreached.
func (c *Client) transportError(ctx context.Context, method, path string, err error) error {
	var se *SecretError
	if errors.As(err, &se) {
		return se
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%s %s: %w", method, path, ctx.Err())
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // its message repeats the URL
	}
	return &UnreachableError{URL: c.base, Method: method, Path: path, Err: err}
}

func statusError(method, path string, status int, body []byte) error {
	if len(body) > maxErrorBody {
		body = body[:maxErrorBody]
	}
	e := &HTTPError{Method: method, Path: path, Status: status, Body: string(body)}
	if status == http.StatusForbidden {
		e.scope = scopeRefusal(e.Body)
	}
	return e
}

// Gitea 1.26 refuses out-of-scope routes before checking rights
// (routers/api/v1/api.go, tokenRequiresScopes, checkTokenPublicOnly).
var (
	// refusedScope: "token does not have at least one of required scope(s),
	// required=[read:organization], token scope=write:issue".
	refusedScope = regexp.MustCompile(`token does not have at least one of required scope\(s\), required=\[([^\]]*)\](?:, token scope=([a-z:,-]*))?`)
	// refusedPublicOnly: "token scope is limited to public repos".
	refusedPublicOnly = regexp.MustCompile(`token scope is limited to public [a-z]+`)
)

// scopeRefusal reads what a 403's body says the token lacks: nil when it
// is no refusal for want of a scope. Gitea lists every scope the route
// asks for; those the token holds are left out.
func scopeRefusal(body string) *issues.ScopeError {
	if refusedPublicOnly.MatchString(body) {
		return &issues.ScopeError{PublicOnly: true}
	}
	m := refusedScope.FindStringSubmatch(body)
	if m == nil {
		return nil
	}
	required := strings.Fields(m[1])
	held := strings.Split(m[2], ",")
	var missing []string
	for _, r := range required {
		if !scopes.Holds(held, r) {
			missing = append(missing, r)
		}
	}
	if len(missing) == 0 {
		missing = required
	}
	return &issues.ScopeError{Missing: missing}
}

// sdkError maps SDK outcomes to this package's errors; the SDK already read
// the body into err.
func (c *Client) sdkError(ctx context.Context, method, path string, resp *gitea.Response, err error) error {
	if err == nil {
		return nil
	}
	if resp == nil || resp.Response == nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%s %s: %w", method, "/api/v1"+path, ctx.Err())
		}
		var ue *url.Error
		var se *SecretError
		if errors.As(err, &ue) || errors.As(err, &se) {
			return c.transportError(ctx, method, "/api/v1"+path, err)
		}
		return fmt.Errorf("%s %s: %w", method, "/api/v1"+path, err) // refused by the SDK before sending
	}
	p := "/api/v1" + path
	if resp.Request != nil && resp.Request.URL != nil {
		p = resp.Request.URL.Path
	}
	if resp.StatusCode/100 != 2 {
		return statusError(method, p, resp.StatusCode, []byte(sdkMessage(err)))
	}
	if err := c.cutShort(ctx, method, p, err); err != nil {
		return err
	}
	return fmt.Errorf("%s %s: %w", method, p, err) // e.g. an undecodable answer
}

// sdkMessage is the server's message in the SDK's error for a non-2xx
// answer. For Gitea's JSON errors that is the whole error. For any other
// answer (a proxy's "502 Bad Gateway" page, say) the SDK writes "unknown API
// error: <status>\nRequest: '<path>' with '<method>' method and '<body>'
// body", and only the body says something the status does not.
func sdkMessage(err error) string {
	msg := err.Error()
	const unknown, open, end = "unknown API error: ", " method and '", "' body"
	i := strings.Index(msg, open)
	if !strings.HasPrefix(msg, unknown) || i < 0 || !strings.HasSuffix(msg, end) {
		return msg
	}
	return msg[i+len(open) : len(msg)-len(end)]
}

// send sends one request to /api/v1+path (path may carry a query) with a
// JSON body in (if non-nil). It returns the answer of a 2xx status, to be
// closed, and the path to name in errors; any other status is an error.
func (c *Client) send(ctx context.Context, method, path string, in any) (*http.Response, string, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, "", fmt.Errorf("forge: %w", err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+"/api/v1"+path, body)
	if err != nil {
		return nil, "", fmt.Errorf("forge: %w", err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "token "+c.token)
	}
	req.Header.Set("User-Agent", userAgent)
	shown := req.URL.Path
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, shown, c.transportError(ctx, method, shown, err)
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return nil, shown, statusError(method, shown, resp.StatusCode, b)
	}
	return resp, shown, nil
}

// readError classifies an error met while reading a 2xx answer.
func (c *Client) readError(ctx context.Context, method, shown string, err error) error {
	if err := c.cutShort(ctx, method, shown, err); err != nil {
		return err
	}
	return fmt.Errorf("%s %s: decoding the answer: %w", method, shown, err)
}

// cutShort: over the cap (*TooLargeError), cut off (a transport error), else
// nil.
func (c *Client) cutShort(ctx context.Context, method, path string, err error) error {
	var tl *TooLargeError
	if errors.As(err, &tl) {
		return tl
	}
	var ne net.Error
	if ctx.Err() != nil || errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) {
		return c.transportError(ctx, method, path, err) // the answer was cut off
	}
	return nil
}

// do sends to /api/v1+path (query allowed); nil in or out skips the JSON.
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	resp, shown, err := c.send(ctx, method, path, in)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return c.readError(ctx, method, shown, err)
	}
	return nil
}
