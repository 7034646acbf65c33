package metering

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// The request fields the meter reads: docs/meter.md#what-a-call-is-priced.

// read are the top-level fields that bound the call; spelt otherwise,
// they are refused.
var read = []string{"model", "stream", "stream_options", "max_tokens", "max_completion_tokens", "max_output_tokens", "n"}

// renderedFields are written into the model's input in the provider's own
// words. Each counts as its JSON plus renderAllowance a key and an array
// item, for the words around them; listing tools adds toolPrompt.
var renderedFields = []string{"tools", "functions", "tool_choice", "response_format", "text", "output_format", "output_config"}

// The allowances of rendered fields, in tokens.
const (
	renderAllowance = 3
	toolPrompt      = 1000
)

// stateFields, by endpoint, name what the provider keeps or does unseen:
// refused, with why.
var stateFields = map[Endpoint]map[string]string{
	Responses: {
		"previous_response_id": "continues a conversation the provider keeps",
		"conversation":         "continues a conversation the provider keeps",
		"prompt":               "names a prompt the provider keeps",
	},
	ChatCompletions: {
		"web_search_options": "has the provider search the web and read what it finds",
	},
	Messages: {
		"container":   "names a container the provider keeps",
		"mcp_servers": "has the provider call MCP servers and read their answers",
	},
}

// fileKeys name a file the provider keeps or fetches, anywhere in the input.
var fileKeys = []string{"file_id", "file_ids", "file_url"}

// messageFields, by endpoint, are top-level fields that as a string stand
// for a message of their role, and are priced as one.
var messageFields = map[Endpoint]map[string]string{
	Responses: {"input": "user", "instructions": "developer"},
}

// standsFor is the role string field k stands for on route r, or "".
func standsFor(r Route, k string) string {
	return messageFields[r.Endpoint][k]
}

// serverSide is why field k is refused on r, or "".
func serverSide(r Route, k string) string {
	return stateFields[r.Endpoint][k]
}

// rendered says field k is counted as its JSON.
func rendered(k string) bool {
	for _, f := range renderedFields {
		if f == k {
			return true
		}
	}
	return false
}

func isFileKey(folded string) bool {
	for _, k := range fileKeys {
		if k == folded {
			return true
		}
	}
	return false
}

// toolRefused says why a tool of type typ is refused, or "": only a tool
// the request defines can be priced.
func toolRefused(p Provider, typ string) string {
	switch {
	case typ == "" || typ == "custom":
		return ""
	case typ == "function" && p == OpenAI:
		return ""
	}
	return "which the provider runs or defines itself"
}

// spelling is the API's spelling of folded at depth (1: top level) under
// parent, for fields the meter reads or refuses; else "".
func spelling(depth int, parent, folded string) string {
	var names []string
	switch {
	case depth == 1:
		names = read
		for _, m := range stateFields {
			if _, ok := m[folded]; ok {
				return folded
			}
		}
		if rendered(folded) {
			return folded
		}
	case depth == 2 && parent == "stream_options":
		names = []string{"include_usage"}
	}
	for _, n := range names {
		if n == folded {
			return n
		}
	}
	return ""
}

// foldKey folds k as encoding/json matches names (bytes.EqualFold): keys
// that fold alike are one to some reader. The meter's names are lower
// case and fold to themselves.
func foldKey(k string) string {
	simple := true
	for i := 0; i < len(k); i++ {
		if c := k[i]; c >= utf8.RuneSelf || 'A' <= c && c <= 'Z' {
			simple = false
			break
		}
	}
	if simple {
		return k
	}
	var b strings.Builder
	b.Grow(len(k))
	for _, r := range k {
		b.WriteRune(foldRune(r))
	}
	return b.String()
}

// foldRune is the least rune folding with r, lower-cased if ASCII (k for
// K and the Kelvin sign).
func foldRune(r rune) rune {
	least := r
	for r2 := unicode.SimpleFold(r); r2 != r; r2 = unicode.SimpleFold(r2) {
		least = min(least, r2)
	}
	if 'A' <= least && least <= 'Z' {
		return least + 'a' - 'A'
	}
	return least
}
