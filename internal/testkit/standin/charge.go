package standin

import (
	"bytes"
	"encoding/json"
	"errors"
	"sort"
	"strconv"
	"strings"

	"github.com/gns-guard/gns-guard/internal/tokens"
)

// decodeFirst reads JSON as an upstream that matches keys exactly and
// keeps the first of a key given twice: Python's and JavaScript's parsers
// match exactly, and a validating layer in front of a model server may
// keep the first. Numbers are float64, as encoding/json gives them.
func decodeFirst(raw []byte) (any, error) {
	if !json.Valid(raw) {
		return nil, errors.New("not JSON")
	}
	p := &parser{b: raw}
	return p.value(), nil
}

// parser reads valid JSON, which puts blanks, commas and colons only
// where they belong: it skips them.
type parser struct {
	b []byte
	i int
}

func (p *parser) skip() {
	for p.i < len(p.b) && strings.IndexByte(" \t\r\n,:", p.b[p.i]) >= 0 {
		p.i++
	}
}

func (p *parser) value() any {
	p.skip()
	switch p.b[p.i] {
	case '{':
		p.i++
		m := map[string]any{}
		for p.skip(); p.b[p.i] != '}'; p.skip() {
			k := p.str()
			if v := p.value(); !has(m, k) {
				m[k] = v
			}
		}
		p.i++
		return m
	case '[':
		p.i++
		out := []any{}
		for p.skip(); p.b[p.i] != ']'; p.skip() {
			out = append(out, p.value())
		}
		p.i++
		return out
	case '"':
		return p.str()
	case 't', 'f', 'n':
		lit := p.b[p.i]
		for p.i < len(p.b) && 'a' <= p.b[p.i] && p.b[p.i] <= 'z' {
			p.i++
		}
		if lit == 'n' {
			return nil
		}
		return lit == 't'
	}
	start := p.i
	for p.i < len(p.b) && strings.IndexByte("+-.0123456789eE", p.b[p.i]) >= 0 {
		p.i++
	}
	f, _ := strconv.ParseFloat(string(p.b[start:p.i]), 64)
	return f
}

func has(m map[string]any, k string) bool { _, ok := m[k]; return ok }

func (p *parser) str() string {
	p.skip()
	start := p.i
	for p.i++; p.b[p.i] != '"'; p.i++ {
		if p.b[p.i] == '\\' {
			p.i++
		}
	}
	p.i++
	raw := p.b[start:p.i]
	if !bytes.ContainsRune(raw, '\\') {
		return string(raw[1 : len(raw)-1])
	}
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

// toolPrompt is what Anthropic adds to a request with tools: its tool use
// system prompt, 346 tokens for the Claude 4 models with tool_choice auto
// (docs.anthropic.com: pricing, tool use).
const toolPrompt = 346

// counted is the input a real provider charges for a request, counted
// with the model's encoding (encodingOf):
//   - OpenAI's chat: 3 tokens a message and its text, 3 for the reply,
//     and the tools as OpenAI's cookbook counts them ("How to count tokens
//     with tiktoken": 7 a function, its name and description, 3 and 3 a
//     property with its name, type and description, 12 in all);
//   - the Responses API: its instructions and input alike, each a message
//     when it is a string;
//   - embeddings: the text, and a token an id of a token-id array;
//   - Anthropic: 3 tokens a message and its text, the system prompt, the
//     tools' JSON (as JSON is written, < > and & as they are) and the tool
//     use system prompt.
func counted(path string, body map[string]any) int64 {
	model, _ := body["model"].(string)
	c, err := tokens.New(encodingOf(model))
	if err != nil {
		panic(err)
	}
	text := func(v any) int64 { return textTokens(c, v) }
	switch path {
	case "/v1/embeddings":
		return text(body["input"])
	case "/v1/messages":
		n := text(body["system"]) + messagesTokens(c, body["messages"])
		if tools, _ := body["tools"].([]any); len(tools) > 0 {
			var data bytes.Buffer
			e := json.NewEncoder(&data)
			e.SetEscapeHTML(false)
			_ = e.Encode(tools)
			n += int64(c.Count(strings.TrimSuffix(data.String(), "\n"))) + toolPrompt
		}
		return n
	}
	n := messagesTokens(c, body["instructions"]) + messagesTokens(c, body["messages"]) + messagesTokens(c, body["input"]) + 3
	return n + toolsTokens(c, body["tools"]) + toolsTokens(c, body["functions"])
}

// encodingOf is the encoding a provider counts a model's tokens in, as
// tiktoken maps models to encodings: cl100k_base for GPT-4, GPT-3.5 and
// the embeddings models, o200k_base for GPT-4o and later, and for any
// other model (Claude's tokenizer is not public; any will do for a
// stand-in).
func encodingOf(model string) tokens.Encoding {
	m := strings.ToLower(model)
	for _, p := range []string{"gpt-4o", "gpt-4.1", "gpt-4.5", "chatgpt-4o"} {
		if strings.HasPrefix(m, p) {
			return tokens.O200kBase
		}
	}
	for _, p := range []string{"gpt-4", "gpt-3.5", "gpt-35", "text-embedding-3-", "text-embedding-ada-002"} {
		if strings.HasPrefix(m, p) {
			return tokens.CL100kBase
		}
	}
	return tokens.O200kBase
}

// textTokens counts every string of v, and a token an id of a token-id
// array.
func textTokens(c *tokens.Counter, v any) int64 {
	switch v := v.(type) {
	case string:
		return int64(c.Count(v))
	case float64:
		return 1
	case []any:
		var n int64
		for _, x := range v {
			n += textTokens(c, x)
		}
		return n
	case map[string]any:
		var n int64
		for _, k := range sortedKeys(v) {
			n += textTokens(c, v[k])
		}
		return n
	}
	return 0
}

// messagesTokens is 3 tokens a message and its text (a string input, one
// message).
func messagesTokens(c *tokens.Counter, v any) int64 {
	list, ok := v.([]any)
	if !ok {
		if v == nil {
			return 0
		}
		return 3 + textTokens(c, v)
	}
	var n int64
	for _, m := range list {
		n += 3 + textTokens(c, m)
	}
	return n
}

// toolsTokens counts function definitions as OpenAI's cookbook does.
func toolsTokens(c *tokens.Counter, v any) int64 {
	list, _ := v.([]any)
	if len(list) == 0 {
		return 0
	}
	n := int64(12)
	for _, t := range list {
		f, _ := t.(map[string]any)
		if inner, ok := f["function"].(map[string]any); ok {
			f = inner
		}
		name, _ := f["name"].(string)
		desc, _ := f["description"].(string)
		n += 7 + int64(c.Count(name+":"+strings.TrimSuffix(desc, ".")))
		params, _ := f["parameters"].(map[string]any)
		props, _ := params["properties"].(map[string]any)
		if len(props) > 0 {
			n += 3
		}
		for _, k := range sortedKeys(props) {
			p, _ := props[k].(map[string]any)
			typ, _ := p["type"].(string)
			pdesc, _ := p["description"].(string)
			n += 3 + int64(c.Count(k+":"+typ+":"+strings.TrimSuffix(pdesc, ".")))
			enum, _ := p["enum"].([]any)
			if len(enum) > 0 {
				n -= 3
			}
			for _, e := range enum {
				s, _ := e.(string)
				n += 3 + int64(c.Count(s))
			}
		}
	}
	return n
}

func sortedKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
