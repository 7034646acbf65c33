package metering

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Provider is an API family the meter speaks.
type Provider string

// The providers.
const (
	OpenAI    Provider = "openai"
	Anthropic Provider = "anthropic"
)

// Endpoint is one of the metered APIs.
type Endpoint string

// The endpoints, by their path after /v1/.
const (
	ChatCompletions Endpoint = "chat/completions"
	Responses       Endpoint = "responses"
	Embeddings      Endpoint = "embeddings"
	Messages        Endpoint = "messages"
)

// InvocationHeader names the invocation when the path does not.
const InvocationHeader = "X-Gns-Invocation"

// Route is what an agent's URL names:
// /OWNER/NAME/issues/N[/invocations/ID]/PROVIDER/v1/ENDPOINT. With no
// invocation named, the meter opens one
// (docs/meter.md#one-configuration-kilo-or-any-openai-sdk).
type Route struct {
	Owner, Name string
	Issue       int64
	Invocation  string
	Provider    Provider
	Endpoint    Endpoint
}

// Repo is OWNER/NAME.
func (r Route) Repo() string { return r.Owner + "/" + r.Name }

var routeRe = regexp.MustCompile(`^/([^/]+)/([^/]+)/issues/([0-9]{1,18})(?:/invocations/([^/]+))?/(openai|anthropic)/v1/(.+)$`)

// validInvocation is what report accepts in a comment header, bounded; a
// Gitea login's characters are among them.
var validInvocation = regexp.MustCompile(`^[A-Za-z0-9._:@+_-]{1,200}$`)

// ParseRoute reads a request's path and invocation header; a refusal
// shows a well-formed address.
func ParseRoute(path, invocationHeader string) (Route, *Refusal) {
	m := routeRe.FindStringSubmatch(path)
	if m == nil {
		p := OpenAI
		if strings.Contains(path, "/anthropic/") {
			p = Anthropic
		}
		return Route{Provider: p}, &Refusal{Status: 404, Kind: KindNotFound, Rule: "meter-route",
			Message: fmt.Sprintf("no such route %q: the meter serves /OWNER/NAME/issues/N/openai/v1/{chat/completions,responses,embeddings} "+
				"and /OWNER/NAME/issues/N/anthropic/v1/messages; give the SDK the base URL up to /v1", clip(path, 120))}
	}
	n, _ := strconv.ParseInt(m[3], 10, 64)
	r := Route{Owner: m[1], Name: m[2], Issue: n, Invocation: m[4], Provider: Provider(m[5]), Endpoint: Endpoint(m[6])}
	if !r.known() {
		return r, &Refusal{Status: 404, Kind: KindNotFound, Rule: "meter-route",
			Message: fmt.Sprintf("the meter does not serve %s /v1/%s: "+
				"it meters chat/completions, responses and embeddings (openai) and messages (anthropic)", r.Provider, clip(m[6], 80))}
	}
	if r.Invocation == "" {
		r.Invocation = strings.TrimSpace(invocationHeader)
	}
	switch {
	case n < 1:
		return r, &Refusal{Status: 404, Kind: KindNotFound, Rule: "meter-route", Message: "the issue number must be 1 or more"}
	case r.Invocation != "" && !validInvocation.MatchString(r.Invocation):
		return r, &Refusal{Status: 400, Kind: KindInvalid, Rule: "meter-invocation",
			Message: "the invocation id must be 1 to 200 letters, digits or ._:@+_-"}
	}
	return r, nil
}

// known says the provider serves the endpoint.
func (r Route) known() bool {
	switch r.Provider {
	case OpenAI:
		return r.Endpoint == ChatCompletions || r.Endpoint == Responses || r.Endpoint == Embeddings
	case Anthropic:
		return r.Endpoint == Messages
	}
	return false
}

// clip shortens untrusted text for a message.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
