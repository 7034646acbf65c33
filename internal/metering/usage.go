package metering

import (
	"bytes"
	"encoding/json"
)

// Usage is what a call spent, per the provider's answer.
type Usage struct {
	// Input includes Cached: cache reads (Anthropic: and writes).
	Input, Cached int64
	// Output counts every output token, reasoning included.
	Output, Reasoning int64
	// Known says the answer carried its usage.
	Known bool
}

// Tokens is what the call spent in all.
func (u Usage) Tokens() int64 { return u.Input + u.Output }

// usageJSON is every provider's usage object, read at once.
type usageJSON struct {
	PromptTokens      *int64 `json:"prompt_tokens"`
	CompletionTokens  *int64 `json:"completion_tokens"`
	InputTokens       *int64 `json:"input_tokens"`
	OutputTokens      *int64 `json:"output_tokens"`
	CacheCreation     int64  `json:"cache_creation_input_tokens"`
	CacheRead         int64  `json:"cache_read_input_tokens"`
	PromptDetails     detail `json:"prompt_tokens_details"`
	InputDetails      detail `json:"input_tokens_details"`
	CompletionDetails detail `json:"completion_tokens_details"`
	OutputDetails     detail `json:"output_tokens_details"`
}

type detail struct {
	Cached    int64 `json:"cached_tokens"`
	Reasoning int64 `json:"reasoning_tokens"`
}

// read turns p's usage object into a Usage.
func (j *usageJSON) read(p Provider) (Usage, bool) {
	switch {
	case j == nil:
		return Usage{}, false
	case j.PromptTokens != nil:
		u := Usage{Input: *j.PromptTokens, Cached: j.PromptDetails.Cached, Reasoning: j.CompletionDetails.Reasoning, Known: true}
		if j.CompletionTokens != nil {
			u.Output = *j.CompletionTokens
		}
		return u, true
	case j.InputTokens != nil && p == Anthropic:
		cached := j.CacheCreation + j.CacheRead
		u := Usage{Input: *j.InputTokens + cached, Cached: cached, Known: true}
		if j.OutputTokens != nil {
			u.Output = *j.OutputTokens
		}
		return u, true
	case j.InputTokens != nil:
		u := Usage{Input: *j.InputTokens, Cached: j.InputDetails.Cached, Reasoning: j.OutputDetails.Reasoning, Known: true}
		if j.OutputTokens != nil {
			u.Output = *j.OutputTokens
		}
		return u, true
	}
	return Usage{}, false
}

// answer is what the meter reads of a JSON answer.
type answer struct {
	ID    string     `json:"id"`
	Usage *usageJSON `json:"usage"`
}

// ReadUsage reads a whole JSON answer's usage and id.
func ReadUsage(p Provider, body []byte) (Usage, string) {
	var a answer
	if json.Unmarshal(body, &a) != nil {
		return Usage{}, ""
	}
	u, _ := a.Usage.read(p)
	return u, a.ID
}

// Stream reads a server-sent-event answer's usage, removing what the
// meter's own usage request added to an OpenAI stream.
type Stream struct {
	route  Route
	strip  bool // the client did not ask for the usage event
	usage  Usage
	id     string
	anthIn *Usage // Anthropic: message_start's usage
}

// NewStream follows an answer to call c on route r.
func NewStream(r Route, c Call) *Stream {
	return &Stream{route: r, strip: r.Endpoint == ChatCompletions && !c.ClientUsage}
}

// Usage is the stream's reported spend and the answer's id.
func (s *Stream) Usage() (Usage, string) { return s.usage, s.id }

// streamEvent is what the meter reads of an event's data.
type streamEvent struct {
	ID       string          `json:"id"`
	Type     string          `json:"type"`
	Choices  json.RawMessage `json:"choices"`
	Usage    *usageJSON      `json:"usage"`
	Response *answer         `json:"response"`
	Message  *answer         `json:"message"`
}

// Event reads one whole event, ending blank line included, and returns
// what to pass on: the event, nil to drop it, or it without an unasked
// "usage":null, taken out in ev's own bytes.
func (s *Stream) Event(ev []byte) []byte {
	data := eventData(ev)
	if len(data) == 0 || data[0] != '{' {
		return ev
	}
	if s.id != "" && s.plain(data) {
		if s.strip {
			return stripNullUsage(ev)
		}
		return ev
	}
	var e streamEvent
	if json.Unmarshal(data, &e) != nil {
		return ev
	}
	if s.id == "" {
		s.id = e.ID
	}
	switch s.route.Provider {
	case Anthropic:
		s.anthropic(e)
		return ev
	}
	if e.Response != nil {
		if u, ok := e.Response.Usage.read(OpenAI); ok {
			s.usage = u
		}
		if s.id == "" {
			s.id = e.Response.ID
		}
		return ev
	}
	if u, ok := e.Usage.read(OpenAI); ok {
		s.usage = u
		if s.strip && isEmptyList(e.Choices) {
			return nil
		}
	}
	if s.strip {
		return stripNullUsage(ev)
	}
	return ev
}

// plain tells from the bytes that an event carries no usage: an OpenAI
// chunk with null usage, an Anthropic event but message_start and
// message_delta, a Responses event without a response. Quotes in strings
// are escaped, so a quoted name is the event's own.
func (s *Stream) plain(data []byte) bool {
	switch {
	case s.route.Provider == Anthropic:
		return !bytes.Contains(data, []byte(`"message_start"`)) && !bytes.Contains(data, []byte(`"message_delta"`))
	case s.route.Endpoint == Responses:
		return !bytes.Contains(data, []byte(`"response"`))
	}
	return bytes.Contains(data, []byte(`"usage":null`))
}

// anthropic reads message_start's and message_delta's usage.
func (s *Stream) anthropic(e streamEvent) {
	switch e.Type {
	case "message_start":
		if e.Message == nil {
			return
		}
		s.id = e.Message.ID
		if u, ok := e.Message.Usage.read(Anthropic); ok {
			// Known only once message_delta says the output.
			s.anthIn = &u
		}
	case "message_delta":
		if e.Usage == nil || s.anthIn == nil {
			return
		}
		u := *s.anthIn
		if e.Usage.OutputTokens != nil {
			u.Output = *e.Usage.OutputTokens
		}
		if e.Usage.InputTokens != nil {
			// Newer answers restate the input on message_delta.
			if v, ok := e.Usage.read(Anthropic); ok && v.Input >= u.Input {
				u.Input, u.Cached = v.Input, v.Cached
			}
		}
		s.usage = u
	}
}

// eventData joins an event's data lines, as SSE does. An event of one
// data line, as providers send them, is read in place.
func eventData(ev []byte) []byte {
	var out []byte
	lines := 0
	for line := range bytes.Lines(ev) {
		line = bytes.TrimRight(line, "\r\n")
		d, ok := bytes.CutPrefix(line, []byte("data:"))
		if !ok {
			continue
		}
		d = bytes.TrimPrefix(d, []byte(" "))
		switch lines++; lines {
		case 1:
			out = d
		case 2:
			out = append(append(append([]byte(nil), out...), '\n'), d...)
		default:
			out = append(append(out, '\n'), d...)
		}
	}
	return out
}

func isEmptyList(raw json.RawMessage) bool {
	return len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("[]"))
}

// stripNullUsage removes the "usage":null a usage request adds to each
// chunk, in ev's own bytes; no string holds it unescaped.
func stripNullUsage(ev []byte) []byte {
	for _, m := range [][]byte{[]byte(`,"usage":null`), []byte(`"usage":null,`)} {
		if i := bytes.Index(ev, m); i >= 0 {
			n := copy(ev[i:], ev[i+len(m):])
			return ev[:i+n]
		}
	}
	return ev
}

// SplitEvents cuts whole events, each with its ending blank line, off
// buf's front, and returns the rest.
func SplitEvents(buf []byte) (events [][]byte, rest []byte) {
	for {
		i, n := eventEnd(buf)
		if i < 0 {
			return events, buf
		}
		events = append(events, buf[:i+n])
		buf = buf[i+n:]
	}
}

// eventEnd is the first blank line's offset and length. A blank line of
// carriage returns is looked for only before the first "\n\n".
func eventEnd(b []byte) (int, int) {
	best, size := bytes.Index(b, []byte("\n\n")), 2
	window := b
	if best >= 0 {
		window = b[:best+1]
	}
	if bytes.IndexByte(window, '\r') < 0 {
		return best, size
	}
	for _, sep := range []string{"\r\n\r\n", "\r\r"} {
		w := b
		if best >= 0 {
			w = b[:min(len(b), best+len(sep))]
		}
		if i := bytes.Index(w, []byte(sep)); i >= 0 && (best < 0 || i < best) {
			best, size = i, len(sep)
		}
	}
	return best, size
}
