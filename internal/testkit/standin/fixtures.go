package standin

import (
	"encoding/json"
	"fmt"
	"iter"
	"strings"
)

// answer builds the answers to one request: in is the input it charges.
type answer struct {
	p    *Provider
	n    int64
	path string
	body map[string]any
	in   int64
}

// words are the answer's text, one per output token.
func (a answer) words() []string {
	out := a.output()
	w := make([]string, out)
	for i := range w {
		w[i] = fmt.Sprintf(" w%d", i)
	}
	return w
}

// output is the output tokens of a choice: the stand-in's figure, at most
// the cap (none for embeddings).
func (a answer) output() int64 {
	if a.path == "/v1/embeddings" {
		return 0
	}
	out := a.p.Output.Load()
	for _, k := range []string{"max_tokens", "max_completion_tokens", "max_output_tokens"} {
		if v, ok := a.body[k].(float64); ok && int64(v) < out {
			out = int64(v)
		}
	}
	return out
}

// choices is a chat completion's n.
func (a answer) choices() int64 {
	if n, ok := a.body["n"].(float64); ok && n > 1 && a.path == "/v1/chat/completions" {
		return int64(n)
	}
	return 1
}

func (a answer) model() string { s, _ := a.body["model"].(string); return s }

func (a answer) usage(openAIChat bool) any {
	if a.p.NoUsage.Load() {
		return nil
	}
	in, cached, out := a.in, a.p.Cached.Load(), a.output()
	if openAIChat {
		out *= a.choices()
		// platform.openai.com/docs/api-reference/chat/object: usage
		return map[string]any{"prompt_tokens": in, "completion_tokens": out, "total_tokens": in + out,
			"prompt_tokens_details":     map[string]any{"cached_tokens": cached, "audio_tokens": 0},
			"completion_tokens_details": map[string]any{"reasoning_tokens": 0, "audio_tokens": 0, "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}}
	}
	// platform.openai.com/docs/api-reference/responses/object: usage
	return map[string]any{"input_tokens": in, "input_tokens_details": map[string]any{"cached_tokens": cached},
		"output_tokens": out, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": in + out}
}

// chat is a chat completion object
// (platform.openai.com/docs/api-reference/chat/object).
func (a answer) chat() any {
	return map[string]any{"id": fmt.Sprintf("chatcmpl-standin%d", a.n), "object": "chat.completion", "created": 1790000000, "model": a.model(),
		"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": strings.Join(a.words(), ""), "refusal": nil, "annotations": []any{}},
			"logprobs": nil, "finish_reason": "stop"}},
		"usage": a.usage(true), "service_tier": "default", "system_fingerprint": "fp_standin"}
}

// chatStream is a chat completion's chunks
// (platform.openai.com/docs/api-reference/chat-streaming): a role delta,
// a content delta a word, the finish, with stream_options.include_usage
// a last chunk whose choices are empty and which holds the usage (every
// other chunk then has "usage":null), and data: [DONE]. Each chunk is
// made as it is sent, as a provider makes them: the first event's time
// does not hang on the rest.
func (a answer) chatStream() iter.Seq[string] {
	so, _ := a.body["stream_options"].(map[string]any)
	withUsage, _ := so["include_usage"].(bool)
	id := fmt.Sprintf("chatcmpl-standin%d", a.n)
	chunk := func(choices []any, usage any) string {
		m := map[string]any{"id": id, "object": "chat.completion.chunk", "created": 1790000000, "model": a.model(), "system_fingerprint": "fp_standin", "choices": choices}
		data, _ := json.Marshal(m)
		s := string(data)
		if withUsage {
			u, _ := json.Marshal(usage)
			s = strings.TrimSuffix(s, "}") + `,"usage":` + string(u) + "}"
		}
		return "data: " + s + "\n\n"
	}
	delta := func(d map[string]any, finish any) []any {
		return []any{map[string]any{"index": 0, "delta": d, "logprobs": nil, "finish_reason": finish}}
	}
	return func(yield func(string) bool) {
		if !yield(chunk(delta(map[string]any{"role": "assistant", "content": "", "refusal": nil}, nil), nil)) {
			return
		}
		for _, w := range a.words() {
			if !yield(chunk(delta(map[string]any{"content": w}, nil), nil)) {
				return
			}
		}
		if !yield(chunk(delta(map[string]any{}, "stop"), nil)) {
			return
		}
		if withUsage && !yield(chunk([]any{}, a.usage(true))) {
			return
		}
		yield("data: [DONE]\n\n")
	}
}

// response is a response object
// (platform.openai.com/docs/api-reference/responses/object).
func (a answer) response() map[string]any {
	text := strings.Join(a.words(), "")
	return map[string]any{"id": fmt.Sprintf("resp_standin%d", a.n), "object": "response", "created_at": 1790000000, "status": "completed",
		"model": a.model(), "output": []any{map[string]any{"type": "message", "id": "msg_standin", "status": "completed", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}}},
		"parallel_tool_calls": true, "tools": []any{}, "usage": a.usage(false), "error": nil, "incomplete_details": nil}
}

// responseStream is a response's events
// (platform.openai.com/docs/api-reference/responses-streaming):
// response.created, output_text deltas, response.completed with usage;
// each made as it is sent.
func (a answer) responseStream() iter.Seq[string] {
	ev := func(typ string, m map[string]any) string {
		m["type"] = typ
		data, _ := json.Marshal(m)
		return "event: " + typ + "\ndata: " + string(data) + "\n\n"
	}
	return func(yield func(string) bool) {
		created := a.response()
		created["status"], created["output"], created["usage"] = "in_progress", []any{}, nil
		if !yield(ev("response.created", map[string]any{"response": created, "sequence_number": 0})) {
			return
		}
		words := a.words()
		for i, w := range words {
			if !yield(ev("response.output_text.delta", map[string]any{"item_id": "msg_standin", "output_index": 0, "content_index": 0, "delta": w, "sequence_number": i + 1})) {
				return
			}
		}
		yield(ev("response.completed", map[string]any{"response": a.response(), "sequence_number": len(words) + 1}))
	}
}

// embeddings is an embeddings list
// (platform.openai.com/docs/api-reference/embeddings/object).
func (a answer) embeddings() any {
	u := map[string]any{"prompt_tokens": a.in, "total_tokens": a.in}
	if a.p.NoUsage.Load() {
		u = nil
	}
	return map[string]any{"object": "list", "model": a.model(), "usage": u,
		"data": []any{map[string]any{"object": "embedding", "index": 0, "embedding": []float64{0.0023, -0.0093, 0.0159}}}}
}

func (a answer) anthropicUsage(out int64) any {
	// docs.anthropic.com/en/api/messages: usage
	return map[string]any{"input_tokens": a.in - a.p.Cached.Load(), "cache_creation_input_tokens": 0,
		"cache_read_input_tokens": a.p.Cached.Load(), "output_tokens": out}
}

// message is a Message (docs.anthropic.com/en/api/messages).
func (a answer) message() any {
	m := map[string]any{"id": fmt.Sprintf("msg_standin%d", a.n), "type": "message", "role": "assistant", "model": a.model(),
		"content": []any{map[string]any{"type": "text", "text": strings.Join(a.words(), "")}}, "stop_reason": "end_turn", "stop_sequence": nil,
		"usage": a.anthropicUsage(a.output())}
	if a.p.NoUsage.Load() {
		delete(m, "usage")
	}
	return m
}

// messageStream is a message's events
// (docs.anthropic.com/en/docs/build-with-claude/streaming): message_start
// (usage with the input), content_block_start, ping, text deltas,
// content_block_stop, message_delta (the output tokens), message_stop;
// each made as it is sent.
func (a answer) messageStream() iter.Seq[string] {
	ev := func(typ string, m map[string]any) string {
		m["type"] = typ
		data, _ := json.Marshal(m)
		return "event: " + typ + "\ndata: " + string(data) + "\n\n"
	}
	return func(yield func(string) bool) {
		start := map[string]any{"id": fmt.Sprintf("msg_standin%d", a.n), "type": "message", "role": "assistant", "model": a.model(), "content": []any{},
			"stop_reason": nil, "stop_sequence": nil, "usage": a.anthropicUsage(1)}
		if a.p.NoUsage.Load() {
			delete(start, "usage")
		}
		if !yield(ev("message_start", map[string]any{"message": start})) ||
			!yield(ev("content_block_start", map[string]any{"index": 0, "content_block": map[string]any{"type": "text", "text": ""}})) ||
			!yield(ev("ping", map[string]any{})) {
			return
		}
		for _, w := range a.words() {
			if !yield(ev("content_block_delta", map[string]any{"index": 0, "delta": map[string]any{"type": "text_delta", "text": w}})) {
				return
			}
		}
		usage := map[string]any{"output_tokens": a.output()}
		if a.p.NoUsage.Load() {
			usage = map[string]any{}
		}
		_ = yield(ev("content_block_stop", map[string]any{"index": 0})) &&
			yield(ev("message_delta", map[string]any{"delta": map[string]any{"stop_reason": "end_turn", "stop_sequence": nil}, "usage": usage})) &&
			yield(ev("message_stop", map[string]any{}))
	}
}
