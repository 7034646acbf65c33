package metering

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/gns-guard/gns-guard/internal/tokens"
)

// MaxBodyBytes bounds a body: more than any context window holds.
const MaxBodyBytes = 16 << 20

// Call is a request read, with its worst case.
type Call struct {
	Model  string
	Stream bool
	// ClientUsage says the client asked for the stream's usage itself.
	ClientUsage bool
	// Input is the request's tokens, or its bytes as a bound; Output the
	// most it may answer.
	Input, Output int64
	// Exact says Input was counted with the model's encoding.
	Exact bool
	// Body goes upstream: the client's bytes, perhaps with an answer cap
	// and a usage request added.
	Body []byte
}

// Worst is the call's worst case in tokens.
func (c Call) Worst() int64 { return c.Input + c.Output }

// Counter counts a text's tokens: a *tokens.Counter, or one that
// remembers what it counted.
type Counter interface{ Count(text string) int }

// Counters give the counter of an encoding (one per encoding, shared),
// or nil.
type Counters func(tokens.Encoding) Counter

// ReadCall reads a request body for route r. A request with no answer cap
// gets defaultCap upstream, so the worst case holds. A body a provider
// could read otherwise, or priced out of sight, is refused
// (docs/meter.md#what-a-call-is-priced).
func ReadCall(r Route, body []byte, count Counters, defaultCap int64) (Call, *Refusal) {
	if !validJSON(body) || !bytes.HasPrefix(bytes.TrimSpace(body), []byte("{")) {
		var v any
		return Call{}, invalid(fmt.Sprintf("the request body is not a JSON object: %v", errText(json.Unmarshal(body, &v))))
	}
	// The texts are counted once the model, and so the encoding, is known.
	var texts []string
	s, ref := scan(r, body, func(text string) int64 {
		texts = append(texts, text)
		return 0
	})
	if ref != nil {
		return Call{}, ref
	}
	var model string
	if ref := s.read("model", &model); ref != nil {
		return Call{}, ref
	}
	if strings.TrimSpace(model) == "" {
		return Call{}, invalid("the request names no model")
	}
	counter := counterOf(model, count)
	for _, t := range texts {
		if counter != nil {
			s.input += int64(counter.Count(t))
		} else {
			s.input += int64(len(t))
		}
	}
	c := Call{Model: model, Input: s.input, Exact: counter != nil}
	if s.tools {
		c.Input += toolPrompt
	}
	var stream *bool
	if ref := s.read("stream", &stream); ref != nil {
		return Call{}, ref
	}
	c.Stream = stream != nil && *stream
	var e edits
	if r.Endpoint != Embeddings {
		if ref := c.capOutput(r, s, &e, defaultCap); ref != nil {
			return Call{}, ref
		}
	}
	if c.Stream && r.Endpoint == ChatCompletions {
		if ref := c.askUsage(s, &e); ref != nil {
			return Call{}, ref
		}
	}
	c.Body = e.apply(body)
	return c, nil
}

// counterOf is the counter of model's encoding, or nil.
func counterOf(model string, count Counters) Counter {
	if enc, ok := EncodingOf(model); ok && count != nil {
		return count(enc)
	}
	return nil
}

// read decodes top-level field name, if present, into v; a wrong type is
// refused.
func (s *scanner) read(name string, v any) *Refusal {
	at, ok := s.root.fields[name]
	if !ok {
		return nil
	}
	if err := json.Unmarshal(s.body[at.start:at.end], v); err != nil {
		return invalid(fmt.Sprintf("the field %s: %v", name, err))
	}
	return nil
}

// capOutput bounds the call's output, adding defaultCap upstream when the
// cap is absent or null.
func (c *Call) capOutput(r Route, s *scanner, e *edits, defaultCap int64) *Refusal {
	field, caps := "max_tokens", []string{"max_tokens"}
	switch {
	case r.Endpoint == Responses:
		field, caps = "max_output_tokens", []string{"max_output_tokens"}
	case r.Endpoint == ChatCompletions:
		// A provider may read either: bound by the larger.
		caps = []string{"max_tokens", "max_completion_tokens"}
		if reasoningModel(c.Model) {
			field = "max_completion_tokens"
		}
	}
	limit, ref := s.largest(caps)
	if ref != nil {
		return ref
	}
	choices := int64(1)
	if r.Endpoint == ChatCompletions {
		n, ref := s.largest([]string{"n"})
		if ref != nil {
			return ref
		}
		if n != nil && *n > 1 {
			choices = *n
		}
	}
	if limit == nil {
		if r.Provider == Anthropic {
			return invalid("max_tokens is required")
		}
		limit = &defaultCap
		e.set(s, field, fmt.Appendf(nil, "%d", defaultCap))
	}
	c.Output = saturatingMul(*limit, choices)
	return nil
}

// largest is the largest whole number the top-level fields names hold, or
// nil; a negative or fractional one is refused.
func (s *scanner) largest(names []string) (*int64, *Refusal) {
	var out *int64
	for _, name := range names {
		var v *int64
		if ref := s.read(name, &v); ref != nil {
			return nil, ref
		}
		if v != nil && *v < 0 {
			return nil, invalid(name + " must be 0 or more")
		}
		if v != nil && (out == nil || *v > *out) {
			out = v
		}
	}
	return out, nil
}

// saturatingMul is a × b, capped at the largest int64.
func saturatingMul(a, b int64) int64 {
	if a != 0 && b > (1<<63-1)/a {
		return 1<<63 - 1
	}
	return a * b
}

// askUsage requests stream usage upstream when the client did not.
func (c *Call) askUsage(s *scanner, e *edits) *Refusal {
	at, ok := s.root.fields["stream_options"]
	if !ok || string(s.body[at.start:at.end]) == "null" {
		e.set(s, "stream_options", []byte(`{"include_usage":true}`))
		return nil
	}
	raw := s.body[at.start:at.end]
	sub, ref := scan(Route{}, raw, func(string) int64 { return 0 })
	if ref != nil {
		return invalid("the field stream_options: " + ref.Message)
	}
	var include bool
	if ref := sub.read("include_usage", &include); ref != nil {
		return invalid("the field stream_options: " + ref.Message)
	}
	if include {
		c.ClientUsage = true
		return nil
	}
	e.member(at.start, sub, "include_usage", []byte("true"))
	return nil
}

// edits are changes to a body, each replacing a span.
type edits []edit

type edit struct {
	at   span
	text []byte
}

// set gives top-level field name the value raw, replacing a null or
// appended last.
func (e *edits) set(s *scanner, name string, raw []byte) {
	e.member(0, s, name, raw)
}

// member sets name in s's object, at body offset base.
func (e *edits) member(base int, s *scanner, name string, raw []byte) {
	if at, ok := s.root.fields[name]; ok {
		*e = append(*e, edit{at: span{base + at.start, base + at.end}, text: raw})
		return
	}
	text := make([]byte, 0, len(name)+len(raw)+4)
	if len(s.root.fields) > 0 {
		text = append(text, ',')
	}
	text = append(text, '"')
	text = append(text, name...)
	text = append(text, '"', ':')
	text = append(text, raw...)
	at := base + s.root.last
	*e = append(*e, edit{at: span{at, at}, text: text})
}

// apply returns body with the edits, leaving body as is.
func (e edits) apply(body []byte) []byte {
	if len(e) == 0 {
		return body
	}
	slices.SortStableFunc(e, func(a, b edit) int { return a.at.start - b.at.start })
	out := make([]byte, 0, len(body)+64)
	pos := 0
	for _, ed := range e {
		out = append(out, body[pos:ed.at.start]...)
		out = append(out, ed.text...)
		pos = ed.at.end
	}
	return append(out, body[pos:]...)
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

// errText is err's text, or "empty" for none.
func errText(err error) string {
	if err == nil {
		return "it is not an object"
	}
	return err.Error()
}
