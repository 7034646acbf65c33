package metering

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

func counters(t *testing.T) Counters {
	return func(enc tokens.Encoding) Counter {
		c, err := tokens.New(enc)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
}

func TestParseRoute(t *testing.T) {
	r, ref := ParseRoute("/acme/app/issues/7/invocations/run-1/openai/v1/chat/completions", "")
	if ref != nil || r.Repo() != "acme/app" || r.Issue != 7 || r.Invocation != "run-1" || r.Endpoint != ChatCompletions {
		t.Fatalf("%+v %v", r, ref)
	}
	r, ref = ParseRoute("/acme/app/issues/7/anthropic/v1/messages", "run-2")
	if ref != nil || r.Invocation != "run-2" || r.Provider != Anthropic {
		t.Fatalf("the header's invocation: %+v %v", r, ref)
	}
	if r, ref := ParseRoute("/acme/app/issues/7/openai/v1/chat/completions", ""); ref != nil || r.Invocation != "" || r.Issue != 7 {
		t.Errorf("a URL naming no invocation: %+v %v; want it parsed, the invocation left to the meter", r, ref)
	}
	for path, rule := range map[string]string{
		"/acme/app/issues/7/invocations/a%20b/openai/v1/chat/completions": "meter-invocation",
		"/acme/app/issues/7/invocations/i/anthropic/v1/chat/completions":  "meter-route",
		"/acme/app/issues/0/invocations/i/openai/v1/embeddings":           "meter-route",
		"/v1/chat/completions": "meter-route",
		"/acme/app/issues/7/invocations/i/openai/v1/../../../../etc/passwd": "meter-route",
		"/acme/app/issues/7/invocations/i/openai/v1/chat/completions/extra": "meter-route",
	} {
		inv := ""
		if strings.Contains(path, "a%20b") {
			path, inv = "/acme/app/issues/7/openai/v1/chat/completions", "a b"
		}
		if _, ref := ParseRoute(path, inv); ref == nil || ref.Rule != rule {
			t.Errorf("%s: %v, want %s", path, ref, rule)
		}
	}
}

// The worst case is the input counted exactly with the model's encoding,
// plus the answer's cap times n; a request without a cap gets the default
// added to what goes upstream, every byte before it kept.
func TestReadCall(t *testing.T) {
	chat := Route{Provider: OpenAI, Endpoint: ChatCompletions}
	body := `{"model":"gpt-4o","n":2,"max_tokens":100,"messages":[{"role":"user","content":"hello there"}]}`
	c, ref := ReadCall(chat, []byte(body), counters(t), 4096)
	want := int64(3 + 2 + 2 + 2 + 1 + 2) // framing; the keys role and content, "user", "hello there": a token each and their tokens
	if ref != nil || !c.Exact || c.Input != want || c.Output != 200 || string(c.Body) != body {
		t.Fatalf("%+v %v; want input %d, output 200, the body as sent", c, ref, want)
	}
	c, _ = ReadCall(chat, []byte(`{"model":"gpt-4o","messages":[]} `), counters(t), 4096)
	if string(c.Body) != `{"model":"gpt-4o","messages":[],"max_tokens":4096} ` || c.Output != 4096 {
		t.Errorf("no cap: %s %d", c.Body, c.Output)
	}
	c, _ = ReadCall(chat, []byte(`{"model":"o3-mini","messages":[]}`), counters(t), 10)
	if !strings.Contains(string(c.Body), `"max_completion_tokens":10`) {
		t.Errorf("a reasoning model: %s", c.Body)
	}
	c, _ = ReadCall(chat, []byte(`{"model":"gpt-4o","stream":true,"max_tokens":5,"messages":[]}`), counters(t), 10)
	if string(c.Body) != `{"model":"gpt-4o","stream":true,"max_tokens":5,"messages":[],"stream_options":{"include_usage":true}}` || c.ClientUsage {
		t.Errorf("a stream: %s", c.Body)
	}
	c, _ = ReadCall(Route{Provider: Anthropic, Endpoint: Messages}, []byte(`{"model":"claude-x","max_tokens":5,"messages":[{"role":"user","content":"héllo"}]}`), counters(t), 10)
	if c.Exact || c.Input != 3+1+4+1+4+1+7+1+6 {
		t.Errorf("an unknown model counts a token a byte: %+v", c)
	}
	for _, bad := range []string{`{"model":"claude-x","messages":[]}`, `{"model":`, `[1]`, `{"max_tokens":3}`, `{"model":"gpt-4o","max_tokens":-1}`} {
		if _, ref := ReadCall(Route{Provider: Anthropic, Endpoint: Messages}, []byte(bad), counters(t), 10); ref == nil || ref.Status != 400 {
			t.Errorf("%s: %v", bad, ref)
		}
	}
}

// What the meter added to a stream the client did not ask the usage of is
// taken out; everything else passes as it came.
func TestStreamStripsTheUsageItAskedFor(t *testing.T) {
	r := Route{Provider: OpenAI, Endpoint: ChatCompletions}
	s := NewStream(r, Call{})
	chunk := "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi \\\"usage\\\":null\"}}],\"usage\":null}\n\n"
	if got := string(s.Event([]byte(chunk))); got != strings.Replace(chunk, `,"usage":null`, "", 1) {
		t.Errorf("chunk: %q", got)
	}
	last := "data: {\"id\":\"c1\",\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":4,\"prompt_tokens_details\":{\"cached_tokens\":2},\"completion_tokens_details\":{\"reasoning_tokens\":1}}}\n\n"
	if s.Event([]byte(last)) != nil {
		t.Error("the usage chunk the client did not ask for reached it")
	}
	if done := "data: [DONE]\n\n"; string(s.Event([]byte(done))) != done {
		t.Error("[DONE] changed")
	}
	u, id := s.Usage()
	if !u.Known || u.Tokens() != 13 || u.Cached != 2 || u.Reasoning != 1 || id != "c1" {
		t.Errorf("usage %+v id %q", u, id)
	}
	asked := NewStream(r, Call{ClientUsage: true})
	if string(asked.Event([]byte(last))) != last {
		t.Error("the usage chunk the client asked for was taken out")
	}
}

func TestAnthropicStreamUsage(t *testing.T) {
	s := NewStream(Route{Provider: Anthropic, Endpoint: Messages}, Call{})
	s.Event([]byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m1\",\"usage\":{\"input_tokens\":20,\"cache_read_input_tokens\":5,\"output_tokens\":1}}}\n\n"))
	if u, _ := s.Usage(); u.Known {
		t.Fatal("usage known before message_delta: a cut stream would be under-charged")
	}
	s.Event([]byte("event: message_delta\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":30}}\n\n"))
	if u, id := s.Usage(); !u.Known || u.Input != 25 || u.Output != 30 || id != "m1" {
		t.Errorf("usage %+v %s", u, id)
	}
}

func TestSplitEvents(t *testing.T) {
	evs, rest := SplitEvents([]byte("data: a\n\ndata: b\r\n\r\ndata: c"))
	if len(evs) != 2 || string(evs[1]) != "data: b\r\n\r\n" || string(rest) != "data: c" {
		t.Errorf("%q %q", evs, rest)
	}
}

func TestAdmit(t *testing.T) {
	st := Standing{Total: 10000, Consumed: 9000, Remaining: 1000}
	call := Call{Model: "gpt-4o", Input: 100, Output: 400}
	if ref := Admit(st, Pending{Tokens: 500}, call, Money{}); ref != nil {
		t.Errorf("500 + 500 of 1,000: %v", ref)
	}
	ref := Admit(st, Pending{Tokens: 501}, call, Money{})
	if ref == nil || ref.Rule != "meter-over-budget" || ref.Status != 403 || !strings.Contains(ref.Message, "more than the 499 the issue's budget has left") {
		t.Errorf("501 + 500 of 1,000: %v", ref)
	}
	price := config.Price{Input: 2, Output: 8, Cached: 0.5}
	// The worst cost: 100 × $2 + 400 × $8 per million, 3,400 millionths.
	if ref := Admit(st, Pending{Cost: 1000}, call, Money{Price: price, HasPrice: true, Cap: 4400}); ref != nil {
		t.Errorf("1,000 + 3,400 µ$ within 4,400: %v", ref)
	}
	if ref := Admit(st, Pending{Cost: 1000}, call, Money{Price: price, HasPrice: true, Cap: 4399}); ref == nil || ref.Rule != "meter-money-cap" {
		t.Errorf("1,000 + 3,400 µ$ over 4,399: %v", ref)
	}
	if ref := Admit(st, Pending{}, call, Money{Cap: 1}); ref == nil || ref.Rule != "meter-money-cap" {
		t.Errorf("a model with no price under a cap: %v", ref)
	}
	if got := Cost(Usage{Input: 1000, Cached: 400, Output: 100}, price); got != 600*2+400/2+800 {
		t.Errorf("cost %d", got)
	}
}

func TestWarning(t *testing.T) {
	st := Standing{Total: 1000, Consumed: 700}
	for pending, want := range map[int64]string{99: "", 100: "80%", 200: "90%", 250: "95%", 400: "95%"} {
		if got := Warning(st, Pending{Tokens: pending}); !strings.HasPrefix(got, want) || (want == "") != (got == "") {
			t.Errorf("pending %d: %q, want %s", pending, got, want)
		}
	}
}

func TestRefusalShapes(t *testing.T) {
	ref := &Refusal{Status: 403, Kind: KindBudget, Rule: "meter-over-budget", Message: "x <b>"}
	if got := string(ref.Body(OpenAI)); got != `{"error":{"code":"meter-over-budget","message":"gns-guard meter: x \u003cb\u003e [meter-over-budget]","param":null,"type":"insufficient_quota"}}` {
		t.Errorf("OpenAI: %s", got)
	}
	if got := string(ref.Body(Anthropic)); got != `{"error":{"message":"gns-guard meter: x \u003cb\u003e [meter-over-budget]","type":"permission_error"},"type":"error"}` {
		t.Errorf("Anthropic: %s", got)
	}
	// A refusal for who the key is says so, not that a quota ran out.
	auth := &Refusal{Status: 403, Kind: KindPermission, Rule: "meter-auth", Message: "x"}
	if got := string(auth.Body(OpenAI)); !strings.Contains(got, `"type":"permission_error"`) {
		t.Errorf("OpenAI, meter-auth: %s", got)
	}
}

// A body a provider could read otherwise than the meter is refused: a key
// given twice in any letter case at any depth (an upstream that matches
// keys exactly takes the first, encoding/json the last in any case), a
// field the meter reads spelt in another case, more than one JSON value.
func TestReadCallRefusesAmbiguousBodies(t *testing.T) {
	chat := Route{Provider: OpenAI, Endpoint: ChatCompletions}
	for _, body := range []string{
		`{"model":"gpt-4o","max_tokens":20000,"MAX_TOKENS":1,"messages":[]}`,
		`{"model":"gpt-4o","max_tokens":20000,"max_tokens":1,"messages":[]}`,
		`{"model":"gpt-4o","max_tokens":20000,"max\u005ftokens":1,"messages":[]}`,
		`{"model":"gpt-4o","max_tokens":20000,"max_to` + "\u212a" + `ens":1,"messages":[]}`, // the Kelvin sign folds to k
		`{"model":"gpt-4o","max_tokens":5,"messages":[{"role":"user","content":"a","Content":"b"}]}`,
		`{"model":"gpt-4o","max_tokens":5,"messages":[],"tools":[{"type":"function","function":{"name":"f","parameters":{"properties":{"a":{},"A":{}}}}}]}`,
		`{"model":"gpt-4o","MAX_TOKENS":1,"messages":[]}`,
		`{"model":"gpt-4o","max_tokens":5,"N":128,"messages":[]}`,
		`{"Model":"gpt-4o","max_tokens":5,"messages":[]}`,
		`{"model":"gpt-4o","max_tokens":5,"stream":true,"stream_options":{"Include_Usage":false},"messages":[]}`,
		`{"model":"gpt-4o","max_tokens":5,"messages":[]}{"max_tokens":9000}`,
		`{"model":"gpt-4o","max_tokens":1.5,"messages":[]}`,
		`{"model":"gpt-4o","max_tokens":5,"messages":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`,
	} {
		if c, ref := ReadCall(chat, []byte(body), counters(t), 10); ref == nil || ref.Status != 400 || ref.Rule != "meter-request" {
			t.Errorf("%.120s: %v, %+v; want a 400", body, ref, c)
		}
	}
	ref := readRefusal(t, chat, `{"model":"gpt-4o","max_tokens":5,"messages":[{"role":"user","content":"a","CONTENT":"b"}]}`)
	if !strings.Contains(ref.Message, `messages[0] gives the key "CONTENT" twice`) {
		t.Errorf("the refusal does not say where: %s", ref.Message)
	}
	for _, body := range []string{
		`{"model":"gpt-4o","max_tokens":5,"messages":[{"role":"user","content":"a"},{"role":"user","content":"b"}]}`,
		`{"model":"gpt-4o","max_tokens":5,"messages":[],"tools":[{"type":"function","function":{"name":"f","parameters":{"properties":{"Max_Tokens":{},"Model":{}}}}}]}`,
		"\n {\"model\":\"gpt-4o\",\"max_tokens\":5,\"messages\":[]} \n",
	} {
		if _, ref := ReadCall(chat, []byte(body), counters(t), 10); ref != nil {
			t.Errorf("%s: %v", body, ref)
		}
	}
}

func readRefusal(t *testing.T, r Route, body string) *Refusal {
	t.Helper()
	_, ref := ReadCall(r, []byte(body), counters(t), 10)
	if ref == nil {
		t.Fatalf("%s: admitted", body)
	}
	return ref
}

// Token ids are tokens: an embeddings input of ids counts one a id.
func TestReadCallCountsTokenIDs(t *testing.T) {
	emb := Route{Provider: OpenAI, Endpoint: Embeddings}
	ids := strings.TrimSuffix(strings.Repeat("100257,", 24000), ",")
	for _, body := range []string{`{"model":"text-embedding-3-small","input":[` + ids + `]}`, `{"model":"text-embedding-3-small","input":[[` + ids + `]]}`} {
		c, ref := ReadCall(emb, []byte(body), counters(t), 10)
		if ref != nil || c.Input != 3+24000 || c.Output != 0 {
			t.Errorf("%.60s...: %v input %d; want 24,003", body, ref, c.Input)
		}
	}
}

// A Responses input or instructions given as a string is a message the
// provider frames as one: priced as that message written out, a user's
// and a developer's, in a known encoding and in bytes alike. A string of
// chat or embeddings stands for no message.
func TestReadCallPricesAStringThatStandsForAMessage(t *testing.T) {
	responses := Route{Provider: OpenAI, Endpoint: Responses}
	for _, tt := range []struct{ short, long string }{
		{`{"model":"gpt-4o","input":"hello there"}`, `{"model":"gpt-4o","input":[{"role":"user","content":"hello there"}]}`},
		{`{"model":"gpt-4.1","instructions":"be brief","input":[]}`, `{"model":"gpt-4.1","input":[{"role":"developer","content":"be brief"}]}`},
		{`{"model":"gpt-4.1","instructions":"be brief","input":"hi"}`, `{"model":"gpt-4.1","input":[{"role":"developer","content":"be brief"},{"role":"user","content":"hi"}]}`},
		{`{"model":"local-model","input":"héllo"}`, `{"model":"local-model","input":[{"role":"user","content":"héllo"}]}`},
	} {
		short, ref := ReadCall(responses, []byte(tt.short), counters(t), 10)
		long, ref2 := ReadCall(responses, []byte(tt.long), counters(t), 10)
		if ref != nil || ref2 != nil || short.Input != long.Input {
			t.Errorf("%s: input %d (%v); written out, %d (%v)", tt.short, short.Input, ref, long.Input, ref2)
		}
	}
	c, _ := ReadCall(responses, []byte(`{"model":"gpt-4o","input":"}"}`), counters(t), 10)
	if c.Input != 3+2+2+2+2 { // the request; the keys role and content, "user", "}": a token each and their tokens
		t.Errorf("a string input: %d", c.Input)
	}
	for _, r := range []Route{{Provider: OpenAI, Endpoint: Embeddings}, {Provider: OpenAI, Endpoint: ChatCompletions}} {
		c, _ := ReadCall(r, []byte(`{"model":"gpt-4o","input":"hello there","instructions":"be brief"}`), counters(t), 10)
		if c.Input != 3+3+3 {
			t.Errorf("%s: strings that stand for no message: %d", r.Endpoint, c.Input)
		}
	}
}

// Tools are counted as their whole JSON, names included, with the
// allowances: 600 properties with empty schemas are not a handful of
// tokens.
func TestReadCallCountsTools(t *testing.T) {
	var props []string
	for i := range 600 {
		props = append(props, fmt.Sprintf(`"%s%03d":{}`, strings.Repeat("n", 60), i))
	}
	tools := `[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{` + strings.Join(props, ",") + `}}}}]`
	chat := Route{Provider: OpenAI, Endpoint: ChatCompletions}
	c, ref := ReadCall(chat, []byte(`{"model":"gpt-4o","max_tokens":5,"messages":[],"tools":`+tools+`}`), counters(t), 10)
	if ref != nil || c.Input < 600*(renderAllowance+5)+toolPrompt {
		t.Errorf("OpenAI: %v input %d", ref, c.Input)
	}
	anth := Route{Provider: Anthropic, Endpoint: Messages}
	c, ref = ReadCall(anth, []byte(`{"model":"claude-x","max_tokens":5,"messages":[],"tools":[{"name":"f","input_schema":{"type":"object","properties":{`+strings.Join(props, ",")+`}}}]}`), counters(t), 10)
	if ref != nil || c.Input < int64(len(tools))+toolPrompt {
		t.Errorf("Anthropic: %v input %d; want at least the tools' bytes", ref, c.Input)
	}
	plain, _ := ReadCall(chat, []byte(`{"model":"gpt-4o","max_tokens":5,"messages":[]}`), counters(t), 10)
	empty, _ := ReadCall(chat, []byte(`{"model":"gpt-4o","max_tokens":5,"messages":[],"tools":[]}`), counters(t), 10)
	if empty.Input >= plain.Input+toolPrompt {
		t.Errorf("no tools pays the tools' prompt: %d against %d", empty.Input, plain.Input)
	}
}

// What the provider keeps or fetches is refused, naming the field; the
// same names inside a tool's schema or a tool call's arguments are text.
func TestReadCallRefusesServerState(t *testing.T) {
	responses := Route{Provider: OpenAI, Endpoint: Responses}
	chat := Route{Provider: OpenAI, Endpoint: ChatCompletions}
	anth := Route{Provider: Anthropic, Endpoint: Messages}
	for _, tt := range []struct {
		r          Route
		body, name string
	}{
		{responses, `{"model":"gpt-4.1","previous_response_id":"resp_1","input":"go on"}`, "previous_response_id"},
		{responses, `{"model":"gpt-4.1","conversation":"conv_1","input":"go on"}`, "conversation"},
		{responses, `{"model":"gpt-4.1","prompt":{"id":"pmpt_1"},"input":"go on"}`, "prompt"},
		{responses, `{"model":"gpt-4.1","input":[{"role":"user","content":[{"type":"input_file","file_id":"file-1"}]}]}`, "input[0].content[0].file_id"},
		{responses, `{"model":"gpt-4.1","input":[{"role":"user","content":[{"type":"input_file","file_url":"https://x/a.pdf"}]}]}`, "input[0].content[0].file_url"},
		{responses, `{"model":"gpt-4.1","input":[{"type":"item_reference","id":"msg_1"}]}`, "input[0] refers to an item"},
		{responses, `{"model":"gpt-4.1","input":"hi","tools":[{"type":"file_search","vector_store_ids":["vs_1"]}]}`, `tools[0] is a tool of type "file_search"`},
		{responses, `{"model":"gpt-4.1","input":"hi","tools":[{"type":"web_search"}]}`, `tools[0] is a tool of type "web_search"`},
		{chat, `{"model":"gpt-4o","max_tokens":5,"messages":[{"role":"user","content":[{"type":"file","file":{"file_id":"file-1"}}]}]}`, "messages[0].content[0].file.file_id"},
		{chat, `{"model":"gpt-4o","max_tokens":5,"web_search_options":{},"messages":[]}`, "web_search_options"},
		{anth, `{"model":"claude-x","max_tokens":5,"messages":[{"role":"user","content":[{"type":"document","source":{"type":"file","file_id":"file_1"}}]}]}`, "messages[0].content[0].source.file_id"},
		{anth, `{"model":"claude-x","max_tokens":5,"messages":[{"role":"user","content":[{"type":"document","source":{"type":"url","url":"https://x/a.pdf"}}]}]}`, "messages[0].content[0].source"},
		{anth, `{"model":"claude-x","max_tokens":5,"container":"container_1","messages":[]}`, "container"},
		{anth, `{"model":"claude-x","max_tokens":5,"messages":[],"tools":[{"type":"web_search_20250305","name":"web_search"}]}`, `tools[0] is a tool of type "web_search_20250305"`},
	} {
		ref := readRefusal(t, tt.r, tt.body)
		if ref.Status != 400 || !strings.Contains(ref.Message, tt.name) {
			t.Errorf("%s: %d %s; want a 400 naming %s", tt.body, ref.Status, ref.Message, tt.name)
		}
	}
	for _, tt := range []struct {
		r    Route
		body string
	}{
		{responses, `{"model":"gpt-4.1","previous_response_id":null,"input":"hi","tools":[{"type":"function","name":"read","parameters":{"type":"object","properties":{"file_id":{"type":"string"}}}}]}`},
		{anth, `{"model":"claude-x","max_tokens":5,"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"read","input":{"file_id":"a"}}]}]}`},
		{chat, `{"model":"gpt-4o","max_tokens":5,"messages":[],"tools":[{"type":"custom","custom":{"name":"patch"}}]}`},
	} {
		if _, ref := ReadCall(tt.r, []byte(tt.body), counters(t), 10); ref != nil {
			t.Errorf("%s: %v", tt.body, ref)
		}
	}
}

// A cap given as null is replaced, not added twice; a stream's
// stream_options get include_usage in place; n counts whole.
func TestReadCallEditsInPlace(t *testing.T) {
	chat := Route{Provider: OpenAI, Endpoint: ChatCompletions}
	for body, want := range map[string]string{
		`{"model":"gpt-4o","max_tokens":null,"messages":[]}`:                                                     `{"model":"gpt-4o","max_tokens":10,"messages":[]}`,
		`{"model":"gpt-4o","max_tokens":5,"stream":true,"stream_options":null,"messages":[]}`:                    `{"model":"gpt-4o","max_tokens":5,"stream":true,"stream_options":{"include_usage":true},"messages":[]}`,
		`{"model":"gpt-4o","max_tokens":5,"stream":true,"stream_options":{"include_usage":false},"messages":[]}`: `{"model":"gpt-4o","max_tokens":5,"stream":true,"stream_options":{"include_usage":true},"messages":[]}`,
		`{"model":"gpt-4o","max_tokens":5,"stream":true,"stream_options":{ },"messages":[]}`:                     `{"model":"gpt-4o","max_tokens":5,"stream":true,"stream_options":{"include_usage":true },"messages":[]}`,
		`{"model":"gpt-4o","seed":12345678901234567890,"stream":true,"stream_options":{"x":1},"messages":[]}`:    `{"model":"gpt-4o","seed":12345678901234567890,"stream":true,"stream_options":{"x":1,"include_usage":true},"messages":[],"max_tokens":10}`,
	} {
		c, ref := ReadCall(chat, []byte(body), counters(t), 10)
		if ref != nil || string(c.Body) != want {
			t.Errorf("%s:\n got %s %v\nwant %s", body, c.Body, ref, want)
		}
	}
	c, _ := ReadCall(chat, []byte(`{"model":"gpt-4o","max_tokens":1000,"max_completion_tokens":3000,"n":500,"messages":[]}`), counters(t), 10)
	if c.Output != 3000*500 {
		t.Errorf("output %d; want the larger cap times n", c.Output)
	}
}

// Events that carry no usage pass without being decoded; a name in a
// string's text does not pass for the event's own.
func TestStreamEventsWithoutUsage(t *testing.T) {
	chat := NewStream(Route{Provider: OpenAI, Endpoint: ChatCompletions}, Call{})
	for _, ev := range []string{
		"data: {\"id\":\"c1\",\"choices\":[{\"delta\":{\"content\":\"a\"}}],\"usage\":null}\n\n",
		"data: {\"id\":\"c1\",\"choices\":[{\"delta\":{\"content\":\"say \\\"usage\\\":{\\\"prompt_tokens\\\":1}\"}}],\"usage\":null}\n\n",
		"data: {\"id\":\"c1\",\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":4}}\n\n",
	} {
		if out := chat.Event([]byte(ev)); out != nil && strings.Contains(string(out), `,"usage":null`) {
			t.Errorf("the usage the client did not ask for passed: %s", out)
		}
	}
	if u, _ := chat.Usage(); !u.Known || u.Tokens() != 13 {
		t.Errorf("chat usage %+v", u)
	}
	anth := NewStream(Route{Provider: Anthropic, Endpoint: Messages}, Call{})
	for _, ev := range []string{
		"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m1\",\"usage\":{\"input_tokens\":20,\"output_tokens\":1}}}\n\n",
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\"{\\\"type\\\":\\\"message_delta\\\",\\\"usage\\\":{\\\"output_tokens\\\":1}}\"}}\n\n",
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"usage\":{\"output_tokens\":30}}\n\n",
	} {
		anth.Event([]byte(ev))
	}
	if u, _ := anth.Usage(); !u.Known || u.Input != 20 || u.Output != 30 {
		t.Errorf("Anthropic usage %+v", u)
	}
}

// The lexer reads valid JSON as encoding/json's tokens do.
func TestLexerReadsAsEncodingJSON(t *testing.T) {
	for _, body := range []string{
		`{"a":"x\"y\\","b\\":[1,-2.5e+3,true,false,null,{}],"c":{"d":[[],[{"e":"\u00e9\ud83d\ude00\n"}]]}}`,
		" { \"model\" : \"gpt-4o\" ,\n\t\"n\" : 0 , \"s\":\"\" } ",
	} {
		dec := json.NewDecoder(strings.NewReader(body))
		dec.UseNumber()
		l := lexer{b: []byte(body)}
		for {
			want, err := dec.Token()
			kind, start, end := l.next()
			if err != nil {
				if kind != 0 {
					t.Errorf("%s: the lexer reads %q past the end", body, body[start:end])
				}
				break
			}
			var got any
			switch kind {
			case '{', '}', '[', ']':
				got = json.Delim(kind)
			case '"':
				got = unquote([]byte(body[start:end]))
			case '0':
				got = json.Number(body[start:end])
			default:
				_ = json.Unmarshal([]byte(body[start:end]), &got)
			}
			if got != want {
				t.Errorf("%s: the lexer reads %#v, encoding/json %#v", body, got, want)
			}
		}
	}
}

// chatStreamBurst is a chat stream of 20 words as a provider sends it when
// the meter asked its usage: every chunk carries "usage":null, and the
// last chunk before [DONE] the usage.
func chatStreamBurst() []byte {
	var b strings.Builder
	chunk := `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1790000000,"model":"gpt-4o","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"content":" w%d"},"logprobs":null,"finish_reason":null}],"usage":null}` + "\n\n"
	for i := range 20 {
		fmt.Fprintf(&b, chunk, i)
	}
	b.WriteString(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1790000000,"model":"gpt-4o","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":20,"total_tokens":32}}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return []byte(b.String())
}

// BenchmarkStreamEvents is what the meter does to a stream's bytes read in
// one burst: cut the events, read each, take out what it added.
func BenchmarkStreamEvents(b *testing.B) {
	burst := chatStreamBurst()
	r := Route{Provider: OpenAI, Endpoint: ChatCompletions}
	buf := make([]byte, len(burst))
	var out []byte
	b.SetBytes(int64(len(burst)))
	for b.Loop() {
		copy(buf, burst) // the meter's reads own their buffer
		s := NewStream(r, Call{})
		events, _ := SplitEvents(buf)
		out = out[:0]
		for _, ev := range events {
			out = append(out, s.Event(ev)...)
		}
	}
	if u, _ := NewStream(r, Call{}).Usage(); u.Known {
		b.Fatal("a new stream knows a usage")
	}
}

// The burst passes whole, less what the meter added, and its usage is read.
func TestStreamBurst(t *testing.T) {
	burst := chatStreamBurst()
	s := NewStream(Route{Provider: OpenAI, Endpoint: ChatCompletions}, Call{})
	events, rest := SplitEvents(slices.Clone(burst))
	var out []byte
	for _, ev := range events {
		out = append(out, s.Event(ev)...)
	}
	want := strings.ReplaceAll(string(burst), `,"usage":null`, "")
	want = want[:strings.Index(want, `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1790000000,"model":"gpt-4o","choices":[]`)] + "data: [DONE]\n\n"
	if len(events) != 22 || len(rest) != 0 || string(out) != want {
		t.Errorf("%d events, rest %q\ngot  %q\nwant %q", len(events), rest, out, want)
	}
	if u, id := s.Usage(); !u.Known || u.Input != 12 || u.Output != 20 || id != "chatcmpl-1" {
		t.Errorf("usage %+v id %q", u, id)
	}
}

// FuzzStream feeds the meter's stream reading any bytes: it never
// panics, cuts events where the plain reading of SSE does, and a stream
// whose client asked the usage passes every event as it came.
func FuzzStream(f *testing.F) {
	f.Add(chatStreamBurst())
	f.Add([]byte("data: a\n\ndata: b\r\n\r\ndata: c\r\rdata: {\"usage\":null,\"x\":1}\n\n"))
	f.Add([]byte("event: message_start\ndata: {\"type\":\"message_start\"}\n\ndata: {\"id\":\"r\",\"usage\":{}}\r\n\r\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		// The plain reading: the earliest of the three blank lines.
		var want [][]byte
		for rest := in; ; {
			best, size := -1, 0
			for _, sep := range []string{"\n\n", "\r\n\r\n", "\r\r"} {
				if i := strings.Index(string(rest), sep); i >= 0 && (best < 0 || i < best) {
					best, size = i, len(sep)
				}
			}
			if best < 0 {
				break
			}
			want = append(want, rest[:best+size])
			rest = rest[best+size:]
		}
		events, _ := SplitEvents(slices.Clone(in))
		if fmt.Sprintf("%q", events) != fmt.Sprintf("%q", want) {
			t.Fatalf("events %q, want %q", events, want)
		}
		for _, p := range []Provider{OpenAI, Anthropic} {
			asked := NewStream(Route{Provider: p, Endpoint: ChatCompletions}, Call{ClientUsage: true})
			unasked := NewStream(Route{Provider: p, Endpoint: ChatCompletions}, Call{})
			for _, ev := range events {
				if got := asked.Event(slices.Clone(ev)); string(got) != string(ev) {
					t.Fatalf("%s, usage asked: %q passed as %q", p, ev, got)
				}
				if got := unasked.Event(slices.Clone(ev)); len(got) > len(ev) {
					t.Fatalf("%s: %q grew to %q", p, ev, got)
				}
			}
		}
	})
}
