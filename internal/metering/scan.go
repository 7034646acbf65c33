package metering

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// maxDepth is the deepest nesting the meter reads, encoding/json's own.
const maxDepth = 10000

// span is where a value lies in a body: body[start:end].
type span struct{ start, end int }

// object is where each member's value lies, by exact key, and where the
// last member ends, for a member the meter adds.
type object struct {
	fields map[string]span
	last   int
}

// frame is an object or array the scan is in.
type frame struct {
	object bool
	// name is its key ("" in an array); index its place.
	name  string
	index int
	start int
	// items counts an array's items, or an object's members.
	items int
	// folded are its folded keys (set once they are many).
	folded []string
	set    map[string]struct{}
	key    string // the key whose value comes next
	hasKey bool
	// typ is the "type" member, source the source's type, fileKey a
	// member naming a file the provider keeps or fetches.
	typ, source, fileKey string
	// data says it is a tool's arguments: counted, never refused.
	data bool
}

// scanner reads a request body in one pass (docs/meter.md#what-a-call-is-priced):
// it refuses what a provider could read otherwise or the meter cannot
// price, counts the input charged, and keeps where top-level fields lie.
type scanner struct {
	body  []byte
	lex   lexer
	route Route
	count func(string) int64
	stack []frame
	root  object
	// field is the top-level field being read.
	field string
	// input is the tokens counted; names counts keys and items in rendered
	// fields; tools says tools or functions list any.
	input, names int64
	tools        bool
	done         bool
}

// value is a value just read, for its frame.
type value struct {
	at     span
	str    string
	isStr  bool
	isNull bool
	closed *frame // the object or array just closed
}

// scan reads body, already valid JSON, for route r.
func scan(r Route, body []byte, count func(string) int64) (*scanner, *Refusal) {
	s := &scanner{body: body, lex: lexer{b: body}, route: r, count: count, input: 3}
	for {
		kind, start, end := s.lex.next()
		switch {
		case kind == 0 && s.done:
			return s, nil
		case kind == 0:
			return nil, invalid("the request body ends before its JSON object does")
		case s.done:
			return nil, invalid("the request body holds more than one JSON value")
		case len(s.stack) == 0 && kind != '{':
			return nil, invalid("the request body is not a JSON object")
		}
		if ref := s.token(kind, start, end); ref != nil {
			return nil, ref
		}
	}
}

func (s *scanner) token(kind byte, start, end int) *Refusal {
	raw := s.body[start:end]
	switch kind {
	case '{', '[':
		return s.open(kind == '{', start)
	case '}', ']':
		return s.close(end)
	case '"':
		v := unquote(raw)
		if top := s.top(); top.object && !top.hasKey {
			return s.key(v)
		}
		s.countText(v)
		return s.valueRead(value{at: span{start, end}, str: v, isStr: true})
	case '0':
		s.countNumber(raw)
		return s.valueRead(value{at: span{start, end}})
	default: // true, false, null
		s.countOther()
		return s.valueRead(value{at: span{start, end}, isNull: raw[0] == 'n'})
	}
}

func (s *scanner) top() *frame {
	if len(s.stack) == 0 {
		return nil
	}
	return &s.stack[len(s.stack)-1]
}

// open enters an object or an array.
func (s *scanner) open(isObject bool, start int) *Refusal {
	depth := len(s.stack)
	switch {
	case depth == 0 && !isObject:
		return invalid("the request body is not a JSON object")
	case depth >= maxDepth:
		return invalid(fmt.Sprintf("the request body nests deeper than %d", maxDepth))
	}
	f := frame{object: isObject, start: start}
	if parent := s.top(); parent != nil {
		f.data = parent.data
		if parent.object {
			f.name = parent.key
			// A tool call's arguments (Anthropic's tool_use input) are the
			// model's own text: counted, never refused.
			f.data = f.data || (f.name == "input" && depth >= 2)
		} else {
			f.index = parent.items
		}
	}
	if depth < cap(s.stack) {
		// Reuse the folded-key room of the popped frame here.
		f.folded = s.stack[:depth+1][depth].folded[:0]
	}
	s.stack = append(s.stack, f)
	if depth == 0 {
		s.root = object{fields: map[string]span{}, last: start + 1}
	}
	return nil
}

// close leaves the innermost object or array, ending at end.
func (s *scanner) close(end int) *Refusal {
	f := s.stack[len(s.stack)-1]
	if f.object {
		if ref := s.judge(&f); ref != nil {
			return ref
		}
	}
	s.stack = s.stack[:len(s.stack)-1]
	if len(s.stack) == 0 {
		s.done = true
		return nil
	}
	return s.valueRead(value{at: span{f.start, end}, closed: &f})
}

// key reads an object's key, refusing one repeated in any case or a known
// field spelt in another.
func (s *scanner) key(k string) *Refusal {
	top := s.top()
	folded := foldKey(k)
	if top.has(folded) {
		return invalid(fmt.Sprintf("%s gives the key %q twice, in one letter case or another: "+
			"a provider may read the one the meter does not; send each key once", s.where(), clip(k, 80)))
	}
	top.add(folded)
	depth := len(s.stack)
	if want := spelling(depth, top.name, folded); want != "" && want != k {
		return invalid(fmt.Sprintf("the field %q is spelt %q in the API: a provider that reads keys exactly would not see it", clip(k, 80), want))
	}
	if depth == 1 {
		s.field = k
	} else if s.content() && !top.data && isFileKey(folded) {
		top.fileKey = k
	}
	if depth > 1 {
		s.countKey(k)
	}
	top.key, top.hasKey = k, true
	return nil
}

// valueRead hands a value just read to its frame.
func (s *scanner) valueRead(v value) *Refusal {
	top := s.top()
	top.items++
	if !top.object {
		if rendered(s.field) {
			s.names++
		}
		return nil
	}
	k := top.key
	top.hasKey = false
	switch {
	case len(s.stack) == 1:
		return s.fieldRead(k, v)
	case k == "type" && v.isStr:
		top.typ = v.str
	case k == "source" && v.closed != nil:
		top.source = v.closed.typ
	}
	return nil
}

// fieldRead ends a top-level field: kept, priced when rendered, refused
// when it names what the provider keeps.
func (s *scanner) fieldRead(k string, v value) *Refusal {
	s.root.fields[k] = v.at
	s.root.last = v.at.end
	s.field = ""
	if v.isNull {
		return nil
	}
	if why := serverSide(s.route, k); why != "" {
		return invalid(fmt.Sprintf("the field %s %s, which the meter cannot see or price: send the whole input in the request instead", k, why))
	}
	if role := standsFor(s.route, k); role != "" && v.isStr {
		s.input += s.framing(role)
	}
	if rendered(k) {
		var b bytes.Buffer
		if err := json.Compact(&b, s.body[v.at.start:v.at.end]); err != nil {
			return invalid("the request body is not JSON: " + err.Error())
		}
		s.input += s.count(b.String()) + renderAllowance*s.names
		s.names = 0
		if (k == "tools" || k == "functions") && v.closed != nil && v.closed.items > 0 {
			s.tools = true
		}
	}
	return nil
}

// framing is what a message of role adds to its text: the keys role and
// content and the role, their tokens and one each.
func (s *scanner) framing(role string) int64 {
	return 3 + s.count("role") + s.count(role) + s.count("content")
}

// judge refuses what it cannot price: an input naming a file or address
// the provider reads, or a tool the provider runs or writes.
func (s *scanner) judge(f *frame) *Refusal {
	depth := len(s.stack) - 1
	if depth == 2 && s.field == "tools" && !s.stack[1].object {
		if why := toolRefused(s.route.Provider, f.typ); why != "" {
			return invalid(fmt.Sprintf("%s is a tool of type %q, %s: the meter cannot price it", s.where(), clip(f.typ, 60), why))
		}
	}
	if !s.content() || f.data {
		return nil
	}
	switch {
	case f.fileKey != "":
		return invalid(fmt.Sprintf("%s.%s names a file the provider keeps or fetches, which the meter cannot see or price: "+
			"send its text in the request", s.where(), f.fileKey))
	case f.typ == "item_reference":
		return invalid(fmt.Sprintf("%s refers to an item the provider keeps, which the meter cannot see or price: send the item itself", s.where()))
	case f.typ == "document" && f.source == "url":
		return invalid(fmt.Sprintf("%s.source is a document the provider fetches, which the meter cannot see or price: send its text", s.where()))
	}
	return nil
}

// content says the scan is in the model's input.
func (s *scanner) content() bool {
	switch s.field {
	case "messages", "input", "system", "instructions":
		return true
	}
	return false
}

// where is the innermost object's path, as messages[1].content[0].
func (s *scanner) where() string {
	if len(s.stack) <= 1 {
		return "the request"
	}
	var b strings.Builder
	for _, f := range s.stack[1:] {
		if f.name != "" || b.Len() == 0 {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(clip(f.name, 60))
			continue
		}
		b.WriteString("[" + strconv.Itoa(f.index) + "]")
	}
	return b.String()
}

// countText counts a string value of the input.
func (s *scanner) countText(v string) {
	switch {
	case s.field == "model":
	case rendered(s.field):
	default:
		s.input += 1 + s.count(v)
	}
}

// countKey counts a nested key, which the model reads.
func (s *scanner) countKey(k string) {
	if rendered(s.field) {
		s.names++
		return
	}
	s.input += 1 + s.count(k)
}

// countNumber counts a number inside a field: in embeddings input a token
// id, one token; else its text.
func (s *scanner) countNumber(n []byte) {
	switch {
	case len(s.stack) == 1 || rendered(s.field):
	case s.route.Endpoint == Embeddings && s.field == "input":
		s.input++
	default:
		s.input += max(1, s.count(string(n)))
	}
}

// countOther counts a nested true, false or null: one token.
func (s *scanner) countOther() {
	if len(s.stack) > 1 && !rendered(s.field) {
		s.input++
	}
}

// has says the object holds folded; add records it.
func (f *frame) has(folded string) bool {
	if f.set != nil {
		_, ok := f.set[folded]
		return ok
	}
	for _, k := range f.folded {
		if k == folded {
			return true
		}
	}
	return false
}

func (f *frame) add(folded string) {
	if f.set == nil && len(f.folded) < 16 {
		f.folded = append(f.folded, folded)
		return
	}
	if f.set == nil {
		f.set = make(map[string]struct{}, 32)
		for _, k := range f.folded {
			f.set[k] = struct{}{}
		}
	}
	f.set[folded] = struct{}{}
}

// invalid is a request the meter will not send: 400.
func invalid(msg string) *Refusal {
	return &Refusal{Status: 400, Kind: KindInvalid, Rule: "meter-request", Message: msg}
}
