package metering

import (
	"bytes"
	"encoding/json"
)

// Usage is what a call spent, as the provider's answer says.
type Usage struct {
	// Input counts every input token, cached ones included; Cached those
	// read from a cache (and, for Anthropic, written to it).
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

// read turns a usage object into a Usage; p says whose shape it is.
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

// answer is the part of a JSON answer the meter reads.
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

// Stream follows a server-sent-event answer event by event: it reads the
// usage, and takes out what the meter's own request for usage added to
// an OpenAI stream the client did not ask it of.
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

// Usage is what the stream said it spent, and the answer's id.
func (s *Stream) Usage() (Usage, string) { return s.usage, s.id }

// streamEvent is the part of an event's data the meter reads.
type streamEvent struct {
	ID       string          `json:"id"`
	Type     string          `json:"type"`
	Choices  json.RawMessage `json:"choices"`
	Usage    *usageJSON      `json:"usage"`
	Response *answer         `json:"response"`
	Message  *answer         `json:"message"`
}

// Event reads one whole event (its lines and the blank line that ends it)
// and returns the bytes to pass on: the event as it came, or nil to drop
// it, or it without the "usage":null the client did not ask for.
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

// plain says an event's data carries no usage, which the meter can tell
// without decoding it: an OpenAI chat chunk whose usage is null, an
// Anthropic event other than message_start and message_delta, a Responses
// event that holds no response. A name quoted in the bytes is a key or a
// value of the event's own: a string's quotes inside it are escaped.
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

// eventData is an event's data lines joined, as the SSE format joins them.
func eventData(ev []byte) []byte {
	var out []byte
	for line := range bytes.Lines(ev) {
		line = bytes.TrimRight(line, "\r\n")
		if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			if len(out) > 0 {
				out = append(out, '\n')
			}
			out = append(out, bytes.TrimPrefix(d, []byte(" "))...)
		}
	}
	return out
}

func isEmptyList(raw json.RawMessage) bool {
	return len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("[]"))
}

// stripNullUsage takes out the "usage":null member a request for usage
// adds to every chunk; a string cannot hold it unescaped.
func stripNullUsage(ev []byte) []byte {
	for _, m := range [][]byte{[]byte(`,"usage":null`), []byte(`"usage":null,`)} {
		if bytes.Contains(ev, m) {
			return bytes.Replace(ev, m, nil, 1)
		}
	}
	return ev
}

// SplitEvents cuts the whole events (each with the blank line that ends
// it) from the front of buf and returns them and what is left.
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

// eventEnd finds the first blank line: its offset and length.
func eventEnd(b []byte) (int, int) {
	best, size := -1, 0
	for _, sep := range []string{"\n\n", "\r\n\r\n", "\r\r"} {
		if i := bytes.Index(b, []byte(sep)); i >= 0 && (best < 0 || i < best) {
			best, size = i, len(sep)
		}
	}
	return best, size
}
