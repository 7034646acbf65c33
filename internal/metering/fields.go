package metering

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// What the meter reads of a request, field by field: docs/meter.md's
// table (docs/meter.md#what-a-call-is-priced) says the same.

// read are the top-level fields the meter reads to bound the call, as the
// API spells them; a request that spells one otherwise is refused.
var read = []string{"model", "stream", "stream_options", "max_tokens", "max_completion_tokens", "max_output_tokens", "n"}

// renderedFields are the fields a provider writes into the model's input
// as text of its own making: tool and function definitions, the tool
// choice and an answer's schema. Each is counted as its whole JSON, names
// and punctuation included, plus renderAllowance a key and an array's
// item (the words a provider's rendering puts around a property or an
// enum's value); a request that lists tools also pays toolPrompt, the
// provider's own prompt for tools.
var renderedFields = []string{"tools", "functions", "tool_choice", "response_format", "text", "output_format", "output_config"}

// The allowances of rendered fields, in tokens.
const (
	renderAllowance = 3
	toolPrompt      = 1000
)

// stateFields are the fields that name what the provider keeps or does
// out of the meter's sight, by endpoint: refused, with why.
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

// fileKeys name a file the provider keeps or fetches, wherever the input
// holds one (a content part, a document's source).
var fileKeys = []string{"file_id", "file_ids", "file_url"}

// messageFields are the top-level fields that, given as a string, stand
// for a message of their role, by endpoint: the provider frames the text
// as it frames that message, and the meter prices it as that message
// written out.
var messageFields = map[Endpoint]map[string]string{
	Responses: {"input": "user", "instructions": "developer"},
}

// standsFor is the role of the message field k of a request on route r
// stands for when it is a string, or "".
func standsFor(r Route, k string) string {
	return messageFields[r.Endpoint][k]
}

// serverSide says why field k of a request on route r is refused, or "".
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

// toolRefused says why a tool of type typ is refused, or "": the meter
// prices tools whose definition the request holds (a function, or a
// custom tool); a tool the provider runs, or whose definition it writes,
// is not in the request.
func toolRefused(p Provider, typ string) string {
	switch {
	case typ == "" || typ == "custom":
		return ""
	case typ == "function" && p == OpenAI:
		return ""
	}
	return "which the provider runs or defines itself"
}

// spelling is the API's spelling of a key folded so, at depth (1: the
// top level) in an object named parent, when the meter reads or refuses
// that field; "" for any other key.
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

// foldKey folds a key as encoding/json matches field names, which is
// bytes.EqualFold: two keys are one to some reader when they fold alike.
// Every name the meter knows is lower case, and folds to itself.
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

// foldRune is the least rune of r's fold set, in lower case when it is
// a letter of ASCII (k for K and for the Kelvin sign).
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
