package meter

import (
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
	"github.com/gns-guard/gns-guard/internal/testkit/sdkclient"
)

func requireNode(t *testing.T) {
	t.Helper()
	if !giteatest.Enabled() {
		t.Skip("the official SDKs run on Node.js, installed with npm ci: GNS_GUARD_INTEGRATION=1 go test ... runs them")
	}
}

func msgs(text string) []any {
	return []any{map[string]any{"role": "user", "content": text}}
}

// The official clients, unmodified, through the meter: only their base URL
// and key change. Every kind of call answers as the provider would, with
// the budget on its headers; the OpenAI stream the client did not ask the
// usage of shows no trace of the meter's request for it; the meter charges
// what the provider reported.
func TestOfficialClients(t *testing.T) {
	requireNode(t)
	r := newRig(t)
	oa, an := r.base(7, "openai"), r.base(7, "anthropic")
	calls := []sdkclient.Call{
		{SDK: "openai", Kind: "chat", BaseURL: oa, APIKey: agentToken1, Body: map[string]any{"model": "gpt-4o", "max_tokens": 30, "messages": msgs("hello")}},
		{SDK: "openai", Kind: "chat-stream", BaseURL: oa, APIKey: agentToken1, Body: map[string]any{"model": "gpt-4o", "max_tokens": 30, "stream": true, "messages": msgs("hello")}},
		{SDK: "openai", Kind: "chat-stream", BaseURL: oa, APIKey: agentToken1, Body: map[string]any{"model": "gpt-4o", "max_tokens": 30, "stream": true, "stream_options": map[string]any{"include_usage": true}, "messages": msgs("hello")}},
		{SDK: "openai", Kind: "responses", BaseURL: oa, APIKey: agentToken1, Body: map[string]any{"model": "gpt-4.1", "max_output_tokens": 30, "input": "hello"}},
		{SDK: "openai", Kind: "responses-stream", BaseURL: oa, APIKey: agentToken1, Body: map[string]any{"model": "gpt-4.1", "max_output_tokens": 30, "stream": true, "input": "hello"}},
		{SDK: "openai", Kind: "embeddings", BaseURL: oa, APIKey: agentToken1, Body: map[string]any{"model": "text-embedding-3-small", "input": "hello"}},
		{SDK: "anthropic", Kind: "messages", BaseURL: an, APIKey: agentToken1, Body: map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 30, "messages": msgs("hello")}},
		{SDK: "anthropic", Kind: "messages-stream", BaseURL: an, APIKey: agentToken1, Body: map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 30, "stream": true, "messages": msgs("hello")}},
	}
	res := sdkclient.Run(t, calls)
	want := strings.Repeat(" w", 1)
	for i, got := range res {
		c := calls[i]
		name := c.SDK + " " + c.Kind
		if got.Error != nil {
			t.Errorf("%s: %+v\nlog:\n%s", name, *got.Error, r.log)
			continue
		}
		if c.Kind != "embeddings" && !strings.HasPrefix(got.Text, want+"0 w1") {
			t.Errorf("%s: text %q", name, got.Text)
		}
		if got.Headers["x-gns-budget-total"] != "20000" || got.Headers["x-gns-budget-remaining"] == "" {
			t.Errorf("%s: budget headers %v", name, got.Headers)
		}
	}
	if s := res[1]; s.Error == nil && (s.UsageFields != 0 || s.UsageChunks != 0 || s.Chunks != 22) {
		t.Errorf("the stream the client did not ask the usage of: %d chunks, %d with a usage field, %d with usage; want 22, 0, 0", s.Chunks, s.UsageFields, s.UsageChunks)
	}
	if s := res[2]; s.Error == nil && (s.UsageChunks != 1 || s.Usage["completion_tokens"] != float64(20)) {
		t.Errorf("the stream the client asked the usage of: %d usage chunks, usage %v", s.UsageChunks, s.Usage)
	}
	for _, q := range r.prov.Requests() {
		if q.Path == "/v1/chat/completions" && q.Body["stream"] == true {
			if so, _ := q.Body["stream_options"].(map[string]any); so["include_usage"] != true {
				t.Errorf("the meter did not ask the upstream for the stream's usage: %v", q.Body)
			}
		}
		if strings.Contains(q.Header.Get("Authorization")+q.Header.Get("X-Api-Key"), agentToken1) {
			t.Errorf("the agent's Gitea token reached the provider on %s", q.Path)
		}
	}
	calls2, err := r.calls()
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range calls2 {
		wantTokens := int64(12 + 20)
		if c.Endpoint == "embeddings" {
			wantTokens = 12
		}
		if !c.Settled || !c.UsageKnown || c.Tokens != wantTokens || c.Login != "coder" || c.RequestID == "" {
			t.Errorf("call %d (%s %s) charged %+v; want %d tokens from the answer's usage", i, c.Provider, c.Endpoint, c, wantTokens)
		}
	}
	if len(calls2) != len(calls) {
		t.Errorf("%d calls in the store, want %d", len(calls2), len(calls))
	}
}

// A refusal reaches the official clients as an error in the provider's
// shape, with a status they do not retry: one refusal a call, none sent
// upstream.
func TestOfficialClientsDoNotRetryARefusal(t *testing.T) {
	requireNode(t)
	r := newRig(t)
	big := map[string]any{"model": "gpt-4o", "max_tokens": 14000, "messages": msgs("hello")}
	res := sdkclient.Run(t, []sdkclient.Call{
		{SDK: "openai", Kind: "chat", BaseURL: r.base(7, "openai"), APIKey: agentToken1, Body: big},
		{SDK: "anthropic", Kind: "messages", BaseURL: r.base(7, "anthropic"), APIKey: agentToken1, Body: map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 14000, "messages": msgs("hello")}},
	})
	for i, got := range res {
		if got.Error == nil || got.Error.Status != 403 || !strings.Contains(got.Error.Message, "meter-over-budget") {
			t.Errorf("call %d: %+v; want a 403 naming meter-over-budget", i, got.Error)
		}
	}
	if res[0].Error != nil && res[0].Error.Code != "meter-over-budget" {
		t.Errorf("OpenAI's client reads the code %q", res[0].Error.Code)
	}
	if res[1].Error != nil && res[1].Error.Type != "permission_error" {
		t.Errorf("Anthropic's client reads the type %q", res[1].Error.Type)
	}
	if n := strings.Count(r.log.String(), "refused:meter-over-budget"); n != 2 {
		t.Errorf("%d refusals logged for 2 calls: a client retried\n%s", n, r.log)
	}
	if n := len(r.prov.Requests()); n != 0 {
		t.Errorf("%d refused calls reached the provider", n)
	}
}
