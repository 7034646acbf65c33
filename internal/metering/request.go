package metering

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gns-guard/gns-guard/internal/tokens"
)

// MaxBodyBytes is the largest request body the meter reads: more than any
// context window holds as text.
const MaxBodyBytes = 16 << 20

// Call is a request read: what it asks of the model and its worst case.
type Call struct {
	Model  string
	Stream bool
	// ClientUsage says the client asked for a stream's usage itself
	// (stream_options.include_usage): the usage event is its own.
	ClientUsage bool
	// Input is the request's text in tokens (exact with the model's
	// encoding, else its bytes: a bound); Output the most it may answer.
	Input, Output int64
	// Exact says Input was counted with the model's encoding.
	Exact bool
	// Body is what goes upstream: the client's bytes, or them with a cap
	// on the answer and a request for the stream's usage added.
	Body []byte
}

// Worst is the call's worst case in tokens.
func (c Call) Worst() int64 { return c.Input + c.Output }

// Counters count tokens in an encoding (one per encoding, shared).
type Counters func(tokens.Encoding) *tokens.Counter

// request is the part of a request body the meter reads.
type request struct {
	Model         string          `json:"model"`
	Stream        bool            `json:"stream"`
	MaxTokens     *int64          `json:"max_tokens"`
	MaxCompletion *int64          `json:"max_completion_tokens"`
	MaxOutput     *int64          `json:"max_output_tokens"`
	N             *int64          `json:"n"`
	StreamOptions json.RawMessage `json:"stream_options"`
}

// ReadCall reads a request body for route r. defaultCap bounds the answer
// of a request that sets no cap: it is added to what goes upstream, so
// the worst case holds.
func ReadCall(r Route, body []byte, count Counters, defaultCap int64) (Call, *Refusal) {
	var req request
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&req); err != nil || !bytes.HasPrefix(bytes.TrimSpace(body), []byte("{")) {
		return Call{}, &Refusal{Status: 400, Kind: KindInvalid, Rule: "meter-request", Message: fmt.Sprintf("the request body is not a JSON object: %v", errText(err))}
	}
	if strings.TrimSpace(req.Model) == "" {
		return Call{}, &Refusal{Status: 400, Kind: KindInvalid, Rule: "meter-request", Message: "the request names no model"}
	}
	c := Call{Model: req.Model, Stream: req.Stream, Body: body}
	var err error
	if c.Input, c.Exact, err = inputTokens(body, req.Model, count); err != nil {
		return Call{}, &Refusal{Status: 400, Kind: KindInvalid, Rule: "meter-request", Message: "the request body is not JSON: " + err.Error()}
	}
	if r.Endpoint != Embeddings {
		if ref := c.capOutput(r, req, defaultCap); ref != nil {
			return Call{}, ref
		}
	}
	if c.Stream && r.Endpoint == ChatCompletions {
		c.askUsage(req)
	}
	return c, nil
}

// capOutput sets the call's output bound from the request, adding the
// default cap upstream when it has none.
func (c *Call) capOutput(r Route, req request, defaultCap int64) *Refusal {
	field, limit := "max_tokens", req.MaxTokens
	switch {
	case r.Endpoint == Responses:
		field, limit = "max_output_tokens", req.MaxOutput
	case r.Endpoint == ChatCompletions && req.MaxCompletion != nil:
		field, limit = "max_completion_tokens", req.MaxCompletion
	case r.Endpoint == ChatCompletions && req.MaxTokens == nil && reasoningModel(req.Model):
		field = "max_completion_tokens"
	}
	if limit != nil && *limit < 0 {
		return &Refusal{Status: 400, Kind: KindInvalid, Rule: "meter-request", Message: field + " must be 0 or more"}
	}
	choices := int64(1)
	if req.N != nil && *req.N > 1 && r.Endpoint == ChatCompletions {
		choices = min(*req.N, 128)
	}
	if limit == nil {
		if r.Provider == Anthropic {
			return &Refusal{Status: 400, Kind: KindInvalid, Rule: "meter-request", Message: "max_tokens is required"}
		}
		c.Body = addField(c.Body, field, defaultCap)
		c.Output = defaultCap * choices
		return nil
	}
	c.Output = *limit * choices
	return nil
}

// askUsage asks the upstream for a stream's usage when the client did not.
func (c *Call) askUsage(req request) {
	var so map[string]any
	if len(req.StreamOptions) > 0 && json.Unmarshal(req.StreamOptions, &so) == nil {
		if v, _ := so["include_usage"].(bool); v {
			c.ClientUsage = true
			return
		}
		var all map[string]any
		if json.Unmarshal(c.Body, &all) != nil {
			return
		}
		so["include_usage"] = true
		all["stream_options"] = so
		c.Body, _ = json.Marshal(all)
		return
	}
	c.Body = addRaw(c.Body, "stream_options", []byte(`{"include_usage":true}`))
}

// addField adds "name":n at the end of a JSON object's bytes.
func addField(body []byte, name string, n int64) []byte {
	return addRaw(body, name, fmt.Appendf(nil, "%d", n))
}

// addRaw adds "name":raw at the end of a JSON object's bytes, keeping
// every byte before it.
func addRaw(body []byte, name string, raw []byte) []byte {
	end := bytes.LastIndexByte(body, '}')
	if end < 0 {
		return body
	}
	head := bytes.TrimRight(body[:end], " \t\r\n")
	out := make([]byte, 0, len(body)+len(name)+len(raw)+4)
	out = append(out, head...)
	if !bytes.HasSuffix(head, []byte("{")) {
		out = append(out, ',')
	}
	out = append(out, '"')
	out = append(out, name...)
	out = append(out, '"', ':')
	out = append(out, raw...)
	return append(out, body[end:]...)
}

// reasoningModel says the model takes max_completion_tokens only.
func reasoningModel(m string) bool {
	m = strings.ToLower(m)
	return strings.HasPrefix(m, "o1") || strings.HasPrefix(m, "o3") || strings.HasPrefix(m, "o4") || strings.HasPrefix(m, "gpt-5")
}

// EncodingOf is the tokenizer of a model, when known.
func EncodingOf(model string) (tokens.Encoding, bool) {
	m := strings.ToLower(model)
	for _, p := range []string{"gpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "o1", "o3", "o4", "chatgpt-4o", "codex-"} {
		if strings.HasPrefix(m, p) {
			return tokens.O200kBase, true
		}
	}
	for _, p := range []string{"gpt-4", "gpt-3.5", "text-embedding-3", "text-embedding-ada-002"} {
		if strings.HasPrefix(m, p) {
			return tokens.CL100kBase, true
		}
	}
	return "", false
}

// inputTokens counts the text of every string value of the request but
// the model's name, plus one token a value and three a request: OpenAI's
// framing of messages is within that. An unknown model's text counts a
// token a byte, which no byte-level tokenizer exceeds.
func inputTokens(body []byte, model string, count Counters) (int64, bool, error) {
	var root map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&root); err != nil {
		return 0, false, err
	}
	delete(root, "model")
	enc, exact := EncodingOf(model)
	var counter *tokens.Counter
	if exact && count != nil {
		counter = count(enc)
	}
	n := int64(3)
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			n++
			if counter != nil {
				n += int64(counter.Count(v))
			} else {
				n += int64(len(v))
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(root)
	return n, counter != nil, nil
}

// errText is err's text, or "empty" for none.
func errText(err error) string {
	if err == nil {
		return "it is not an object"
	}
	return err.Error()
}
