package meter

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/gns-guard/gns-guard/internal/issues"
)

// The worst case as a property: random requests on the four endpoints,
// the stand-in charging each as a provider counts it and answering up to
// its cap. For every call the meter lets through, the provider charged at
// most the worst case the meter reserved, and the meter charged what the
// provider charged; nothing the meter refuses reaches the provider.

// propertyRequests is how many random requests the test sends.
const propertyRequests = 800

// propertyBudget is the issue's budget: large enough that no call is
// refused for it.
const propertyBudget = 1_000_000_000

func TestTheWorstCaseBoundsWhatTheProviderCharges(t *testing.T) {
	r := newRig(t, func(o *Options) { o.DefaultMaxTokens = 700 })
	r.gitea.Change(7, func(is *issues.Issue) { is.Body = body(7, propertyBudget, propertyBudget) })
	judge(t, r.gitea, 7)
	r.prov.Count.Store(true)
	g := &gen{rnd: rand.New(rand.NewPCG(1, 2))}
	sent := map[string]genRequest{} // by the provider's request id
	refused := 0
	for range propertyRequests {
		q := g.request()
		r.prov.Output.Store(g.outputSize())
		before := len(r.prov.Requests())
		resp, answer := post(t, r.base(7, q.provider)+q.path, agentToken1, q.body)
		reqs := r.prov.Requests()
		switch {
		case q.refuse && resp.StatusCode == 400 && len(reqs) == before:
			refused++
		case q.refuse:
			t.Errorf("%s (%s): %d, %d calls reached the provider; want a 400 and none\n%s", q.kind, q.why, resp.StatusCode, len(reqs)-before, clip(q.body))
		case resp.StatusCode == 200 && len(reqs) == before+1:
			sent[reqs[before].ID] = q
		default:
			t.Errorf("%s: %d %s, %d calls reached the provider; want a 200 and one\n%s", q.kind, resp.StatusCode, clip(answer), len(reqs)-before, clip(q.body))
		}
	}
	t.Logf("%d random requests: %d admitted, %d refused", propertyRequests, len(sent), refused)
	if t.Failed() {
		return
	}
	checkCharges(t, r, sent)
	if len(sent)*100 < propertyRequests*80 {
		t.Errorf("%d of %d requests admitted: the generator prices too few", len(sent), propertyRequests)
	}
}

// Calls the property found charged past their worst case, under one seed
// or another, each held to its bound here: a Responses input or
// instructions given as a string, which the provider frames as a message
// of its own (the meter priced the bare string); and two of the
// stand-in's own making, which charged what no provider does: commas to
// GPT-3.5 counted in o200k_base, twice as many tokens as in its encoding,
// cl100k_base, and a Claude tool described in <, counted as \u003c, as
// encoding/json escapes it.
func TestTheCallsThePropertyFoundAreBounded(t *testing.T) {
	r := newRig(t)
	r.gitea.Change(7, func(is *issues.Issue) { is.Body = body(7, propertyBudget, propertyBudget) })
	judge(t, r.gitea, 7)
	r.prov.Count.Store(true)
	r.prov.Output.Store(1 << 30)
	for _, tt := range []struct{ provider, path, body string }{
		{"openai", "/responses", `{"model":"gpt-4o","max_output_tokens":5,"input":"}"}`},
		{"openai", "/responses", `{"model":"gpt-4.1","max_output_tokens":5,"instructions":"be brief","input":[]}`},
		{"openai", "/responses", `{"model":"o4-mini","instructions":"be brief","input":"hi","stream":true}`},
		{"openai", "/chat/completions", `{"model":"gpt-3.5-turbo","max_tokens":5,"messages":[{"role":"user","content":"` + strings.Repeat(",", 3000) + `"}]}`},
		{"anthropic", "/v1/messages", `{"model":"claude-sonnet-4-5","max_tokens":5,"messages":[],"tools":[{"name":"f","description":"` + strings.Repeat("<", 3000) + `","input_schema":{"type":"object"}}]}`},
	} {
		if resp, answer := post(t, r.base(7, tt.provider)+tt.path, agentToken1, tt.body); resp.StatusCode != 200 {
			t.Fatalf("%s: %d %s", clip(tt.body), resp.StatusCode, answer)
		}
	}
	settled(t, r, 5)
	bounded(t, r, propertyBudget)
}

// checkCharges holds each call the meter let through against what the
// provider charged for it.
func checkCharges(t *testing.T, r *rig, sent map[string]genRequest) {
	t.Helper()
	calls := settled(t, r, len(sent))
	worst := map[string]int64{}
	tokens := map[string]int64{}
	for _, c := range calls {
		worst[c.RequestID], tokens[c.RequestID] = c.Worst, c.Tokens
	}
	bad := 0
	for _, p := range r.prov.Requests() {
		q := sent[p.ID]
		w, ok := worst[p.ID]
		switch {
		case !ok:
			t.Errorf("%s: the provider charged %d for a call the meter does not hold", p.ID, p.Charged)
		case w < p.Charged:
			t.Errorf("%s: the provider charged %d, past the worst case %d the meter reserved\n%s", q.kind, p.Charged, w, clip(q.body))
		case tokens[p.ID] != p.Charged:
			t.Errorf("%s: the provider charged %d, the meter %d\n%s", q.kind, p.Charged, tokens[p.ID], clip(q.body))
		default:
			continue
		}
		if bad++; bad >= 10 {
			t.Fatal("and more")
		}
	}
}

// clip shortens a body for a message.
func clip(s string) string {
	if len(s) <= 1500 {
		return s
	}
	return s[:1500] + "…"
}

// genRequest is a random request: where it goes, its body, and whether
// the meter must refuse it (why).
type genRequest struct {
	provider, path, kind string
	body                 string
	refuse               bool
	why                  string
}

// gen makes random requests from a seeded source.
type gen struct{ rnd *rand.Rand }

func (g *gen) n(k int) int            { return g.rnd.IntN(k) }
func (g *gen) chance(p float64) bool  { return g.rnd.Float64() < p }
func (g *gen) between(lo, hi int) int { return lo + g.rnd.IntN(hi-lo+1) }
func pick[T any](g *gen, xs ...T) T   { return xs[g.rnd.IntN(len(xs))] }
func (g *gen) list(lo, hi int, item func() any) []any {
	out := make([]any, g.between(lo, hi))
	for i := range out {
		out[i] = item()
	}
	return out
}

// request is a random request on one of the four endpoints; a few are of
// a shape the meter refuses.
func (g *gen) request() genRequest {
	var q genRequest
	var o obj
	switch g.n(4) {
	case 0:
		q, o = genRequest{provider: "openai", path: "/chat/completions", kind: "chat"}, g.chat()
	case 1:
		q, o = genRequest{provider: "openai", path: "/responses", kind: "responses"}, g.responses()
	case 2:
		q, o = genRequest{provider: "openai", path: "/embeddings", kind: "embeddings"}, g.embeddings()
	default:
		q, o = genRequest{provider: "anthropic", path: "/v1/messages", kind: "messages"}, g.messages()
	}
	if g.chance(0.06) {
		ref := pick(g, refusals[q.kind]...)
		o, q.refuse, q.why = ref.mutate(g, o), true, ref.why
	}
	g.rnd.Shuffle(len(o), func(i, j int) { o[i], o[j] = o[j], o[i] })
	q.body = g.encode(o)
	return q
}

// outputSize is what the stand-in writes: mostly all the cap allows.
func (g *gen) outputSize() int64 {
	if g.chance(0.75) {
		return 1 << 30
	}
	return int64(g.n(2000))
}

// capValue is a random cap on the answer.
func (g *gen) capValue() int {
	switch g.n(6) {
	case 0:
		return g.n(16)
	case 1, 2:
		return g.between(16, 256)
	default:
		return g.between(256, 3000)
	}
}

// obj is a JSON object whose members keep their order.
type obj []member

type member struct {
	k string
	v any
}

func (o *obj) add(k string, v any) { *o = append(*o, member{k, v}) }

// style is how a client writes a string: as encoding/json does (<, >
// and & escaped), in raw UTF-8, or in ASCII with \u escapes (Python's
// json.dumps).
type style struct {
	escapeHTML, ascii bool
}

// encode writes a request's body in a random style, compact or
// indented.
func (g *gen) encode(o obj) string {
	st := pick(g, style{escapeHTML: true}, style{}, style{ascii: true})
	var b bytes.Buffer
	encode(&b, o, st)
	if g.chance(0.2) {
		var out bytes.Buffer
		if err := json.Indent(&out, b.Bytes(), "", pick(g, "  ", "\t")); err != nil {
			panic(err)
		}
		return out.String()
	}
	return b.String()
}

func encode(b *bytes.Buffer, v any, st style) {
	switch v := v.(type) {
	case obj:
		b.WriteByte('{')
		for i, m := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			quote(b, m.k, st)
			b.WriteByte(':')
			encode(b, m.v, st)
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, x := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			encode(b, x, st)
		}
		b.WriteByte(']')
	case string:
		quote(b, v, st)
	case int:
		b.WriteString(strconv.Itoa(v))
	case float64:
		b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case nil:
		b.WriteString("null")
	default:
		panic(fmt.Sprintf("encode: %T", v))
	}
}

func quote(b *bytes.Buffer, s string, st style) {
	var q bytes.Buffer
	e := json.NewEncoder(&q)
	e.SetEscapeHTML(st.escapeHTML)
	if err := e.Encode(s); err != nil {
		panic(err)
	}
	out := bytes.TrimSuffix(q.Bytes(), []byte("\n"))
	if !st.ascii {
		b.Write(out)
		return
	}
	for _, r := range string(out) {
		switch {
		case r < utf8.RuneSelf:
			b.WriteRune(r)
		case r > 0xffff:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(b, `\u%04x\u%04x`, r1, r2)
		default:
			fmt.Fprintf(b, `\u%04x`, r)
		}
	}
}

// scripts are the ranges random text draws its runes from: ASCII and its
// controls, Latin, combining marks, Greek, Cyrillic, Hebrew and Arabic,
// Devanagari, Thai, punctuation (U+2028 among it), kana, CJK, Hangul,
// variation selectors, specials, emoji, and Linear B.
var scripts = [][2]rune{
	{0x20, 0x7e}, {0x20, 0x7e}, {0x00, 0x1f}, {0xa0, 0x24f}, {0x300, 0x36f}, {0x370, 0x3ff}, {0x400, 0x4ff},
	{0x590, 0x6ff}, {0x900, 0x97f}, {0xe00, 0xe7f}, {0x2000, 0x206f}, {0x3040, 0x30ff}, {0x4e00, 0x9fff},
	{0xac00, 0xd7a3}, {0xfe00, 0xfe0f}, {0xfff9, 0xfffd}, {0x1f300, 0x1faff}, {0x10000, 0x1007f},
}

var words = []string{"the", "meter", "budget", "token", "tokens", "agent", "issue", "don't", "API", "JSON",
	"Gitea", "reviewer", "checkpoint", "42", "3.14", "-1", "naïve", "café", "東京", "данные", "😀", "e.g.", "i.e.,", "(x)", "<tag>", "&amp;"}

// length is a random text length: mostly short, now and then long.
func (g *gen) length() int {
	switch g.n(10) {
	case 0, 1, 2:
		return g.n(8)
	case 3, 4, 5, 6:
		return g.n(80)
	case 7, 8:
		return g.n(600)
	default:
		return g.n(3000)
	}
}

func (g *gen) char(script [2]rune) rune {
	return script[0] + rune(g.n(int(script[1]-script[0])+1))
}

// text is random text: words, markup, ASCII, one script, mixed scripts,
// or runs of one character or a few.
func (g *gen) text() string {
	n := g.length()
	var b strings.Builder
	switch g.n(6) {
	case 0:
		for b.Len() < n {
			b.WriteString(pick(g, words...))
			b.WriteString(pick(g, " ", " ", " ", "\n", ", ", ". ", "\t", "  "))
		}
	case 5:
		for b.Len() < n {
			tag := pick(g, "example", "b", "p", "div", "rule")
			fmt.Fprintf(&b, "<%s>%s&amp;%s</%s>%s", tag, pick(g, words...), pick(g, words...), tag, pick(g, "", "\n", " &lt;&gt; ", "<<>>"))
		}
	case 1:
		for range n {
			b.WriteRune(g.char(scripts[0]))
		}
	case 2:
		script := pick(g, scripts...)
		for range n {
			b.WriteRune(g.char(script))
		}
	case 3:
		for range n {
			b.WriteRune(g.char(pick(g, scripts...)))
		}
	default:
		script := pick(g, scripts[0], pick(g, scripts...))
		unit := string(g.char(script))
		if g.chance(0.5) {
			unit += string(g.char(script))
		}
		b.WriteString(strings.Repeat(unit, n))
	}
	return b.String()
}

// ident is a name a program would give: a tool's, an argument's.
func (g *gen) ident() string {
	parts := []string{"get", "set", "read", "write", "user", "file", "path", "id", "count", "list", "x", "query", "Limit", "URL", "max", "tokens"}
	s := pick(g, parts...)
	for range g.n(4) {
		s += pick(g, "_", "", "-") + pick(g, parts...)
	}
	if g.chance(0.3) {
		s += strconv.Itoa(g.n(1000))
	}
	return s
}

// key is an object's key: a name, or now and then any text.
func (g *gen) key() string {
	if g.chance(0.8) {
		return g.ident()
	}
	s := g.text()
	if utf8.RuneCountInString(s) > 40 {
		s = string([]rune(s)[:40])
	}
	return s
}

// fold folds a key as the meter does: two keys that fold alike are one.
func fold(s string) string {
	var b strings.Builder
	for _, r := range s {
		least := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			least = min(least, f)
		}
		b.WriteRune(least)
	}
	return b.String()
}

// members are n members of distinct keys, their values from value.
func (g *gen) members(n int, value func() any) obj {
	o := obj{}
	seen := map[string]bool{}
	for i := range n {
		k := g.key()
		if seen[fold(k)] {
			k += "_" + strconv.Itoa(i)
		}
		if seen[fold(k)] {
			continue
		}
		seen[fold(k)] = true
		o.add(k, value())
	}
	return o
}

// value is a random JSON value nested at most depth more levels; now and
// then a deep chain.
func (g *gen) value(depth int) any {
	k := g.n(10)
	if depth <= 0 {
		k %= 5
	}
	switch k {
	case 0, 1:
		return g.text()
	case 2:
		return g.between(-1<<40, 1<<40)
	case 3:
		return pick[any](g, g.rnd.NormFloat64()*1e6, true, false, nil, 0.5, 1e21)
	case 4:
		return g.ident()
	case 5, 6:
		return g.list(0, 5, func() any { return g.value(depth - 1) })
	case 7:
		if g.chance(0.1) {
			return g.chain(g.between(10, 200))
		}
		fallthrough
	default:
		return g.object(depth - 1)
	}
}

// object is a random JSON object.
func (g *gen) object(depth int) obj {
	return g.members(g.n(6), func() any { return g.value(depth) })
}

// chain nests a value n levels deep in arrays and objects.
func (g *gen) chain(n int) any {
	v := any(g.text())
	for range n {
		if g.chance(0.5) {
			v = []any{v}
		} else {
			v = obj{{g.ident(), v}}
		}
	}
	return v
}

// schema is a random JSON schema.
func (g *gen) schema(depth int) obj {
	typ := pick(g, "string", "string", "integer", "number", "boolean", "array", "object")
	s := obj{{"type", typ}}
	if g.chance(0.5) {
		s.add("description", g.text())
	}
	switch {
	case typ == "string" && g.chance(0.3):
		s.add("enum", g.list(1, 12, func() any { return g.text() }))
	case typ == "array" && depth < 4:
		s.add("items", g.schema(depth+1))
	case typ == "object" && depth < 4:
		s.add("properties", g.properties(depth+1))
		s.add("additionalProperties", false)
	case typ == "integer" && g.chance(0.5):
		s.add("minimum", g.n(10))
		s.add("maximum", g.between(10, 1<<20))
	}
	return s
}

// properties are a schema's properties: few, or many.
func (g *gen) properties(depth int) obj {
	n := g.n(6)
	if g.chance(0.1) {
		n = g.between(6, 40)
	}
	return g.members(n, func() any { return g.schema(depth) })
}

// parameters are a function's parameters, an object's schema.
func (g *gen) parameters() obj {
	props := g.properties(0)
	p := obj{{"type", "object"}, {"properties", props}}
	if len(props) > 0 && g.chance(0.5) {
		p.add("required", []any{props[0].k})
	}
	return p
}

// function is a function's definition as chat's tools and functions hold
// it; flat, as the Responses API's tools do, with the type in it.
func (g *gen) function(flat bool) obj {
	f := obj{}
	if flat {
		f.add("type", "function")
	}
	f.add("name", g.ident())
	if g.chance(0.7) {
		f.add("description", g.text())
	}
	if g.chance(0.9) {
		f.add("parameters", g.parameters())
	}
	if g.chance(0.2) {
		f.add("strict", g.chance(0.5))
	}
	return f
}

// arguments are a tool call's arguments, a JSON text.
func (g *gen) arguments() string {
	var b bytes.Buffer
	encode(&b, g.object(2), style{escapeHTML: true})
	return b.String()
}

var (
	chatModels      = []string{"gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-4.1-nano", "gpt-5-mini", "o3-mini", "o4-mini", "gpt-4-turbo", "gpt-3.5-turbo", "llama-3.1-70b-instruct"}
	responseModels  = []string{"gpt-4.1", "gpt-4o", "gpt-5", "o3", "o4-mini", "codex-mini-latest"}
	embeddingModels = []string{"text-embedding-3-small", "text-embedding-3-large", "text-embedding-ada-002", "nomic-embed-text"}
	claudeModels    = []string{"claude-sonnet-4-5", "claude-opus-4-1", "claude-3-5-haiku-latest", "claude-haiku-4-5"}
)

// chat is a chat completion's request.
func (g *gen) chat() obj {
	o := obj{{"model", pick(g, chatModels...)}, {"messages", g.list(0, 6, g.chatMessage)}}
	if g.chance(0.35) {
		o.add("tools", g.list(1, 4, func() any { return obj{{"type", "function"}, {"function", g.function(false)}} }))
	}
	if g.chance(0.05) {
		o.add("functions", g.list(1, 3, func() any { return g.function(false) }))
	}
	if g.chance(0.15) {
		o.add("tool_choice", pick[any](g, "auto", "none", "required", obj{{"type", "function"}, {"function", obj{{"name", g.ident()}}}}))
	}
	if g.chance(0.15) {
		o.add("response_format", pick[any](g, obj{{"type", "json_object"}},
			obj{{"type", "json_schema"}, {"json_schema", obj{{"name", g.ident()}, {"schema", g.parameters()}}}}))
	}
	g.chatCaps(&o)
	if g.chance(0.35) {
		o.add("stream", true)
		if g.chance(0.5) {
			o.add("stream_options", obj{{"include_usage", g.chance(0.5)}})
		}
	} else if g.chance(0.1) {
		o.add("stream", false)
	}
	g.extras(&o)
	return o
}

// chatCaps are a chat request's caps on its answer, and its n.
func (g *gen) chatCaps(o *obj) {
	capped := false
	for _, k := range []string{"max_tokens", "max_completion_tokens"} {
		if g.chance(0.45) {
			o.add(k, g.capValue())
			capped = true
		}
	}
	if !capped && g.chance(0.2) {
		o.add(pick(g, "max_tokens", "max_completion_tokens"), nil)
	}
	if g.chance(0.2) {
		o.add("n", g.between(1, 4))
	}
}

// extras are parameters the meter does not read.
func (g *gen) extras(o *obj) {
	if g.chance(0.3) {
		o.add("temperature", pick[any](g, 0, 0.7, 1, 1.5))
	}
	if g.chance(0.1) {
		o.add("user", g.text())
	}
	if g.chance(0.1) {
		o.add("metadata", g.members(g.n(4), func() any { return g.text() }))
	}
}

func (g *gen) chatMessage() any {
	role := pick(g, "system", "developer", "user", "user", "assistant", "tool")
	m := obj{{"role", role}}
	switch {
	case role == "assistant" && g.chance(0.4):
		m.add("content", nil)
		m.add("tool_calls", g.list(1, 3, func() any {
			return obj{{"id", "call_" + g.ident()}, {"type", "function"}, {"function", obj{{"name", g.ident()}, {"arguments", g.arguments()}}}}
		}))
		return m
	case role == "tool":
		m.add("tool_call_id", "call_"+g.ident())
	case g.chance(0.1):
		m.add("name", g.ident())
	}
	if g.chance(0.6) {
		m.add("content", g.text())
	} else {
		m.add("content", g.list(0, 4, func() any { return obj{{"type", "text"}, {"text", g.text()}} }))
	}
	return m
}

// responses is a Responses API request.
func (g *gen) responses() obj {
	o := obj{{"model", pick(g, responseModels...)}}
	if g.chance(0.4) {
		o.add("input", g.text())
	} else {
		o.add("input", g.list(0, 6, g.responseItem))
	}
	if g.chance(0.4) {
		o.add("instructions", g.text())
	}
	if g.chance(0.3) {
		o.add("tools", g.list(1, 3, func() any {
			if g.chance(0.2) {
				return obj{{"type", "custom"}, {"name", g.ident()}, {"description", g.text()}}
			}
			return g.function(true)
		}))
	}
	if g.chance(0.15) {
		o.add("text", pick[any](g, obj{{"format", obj{{"type", "text"}}}},
			obj{{"format", obj{{"type", "json_schema"}, {"name", g.ident()}, {"schema", g.parameters()}}}, {"verbosity", "low"}}))
	}
	switch {
	case g.chance(0.8):
		o.add("max_output_tokens", g.capValue())
	case g.chance(0.2):
		o.add("max_output_tokens", nil)
	}
	if g.chance(0.2) {
		o.add("reasoning", obj{{"effort", pick(g, "low", "medium", "high")}})
	}
	if g.chance(0.35) {
		o.add("stream", true)
	}
	if g.chance(0.2) {
		o.add("store", false)
	}
	g.extras(&o)
	return o
}

func (g *gen) responseItem() any {
	switch g.n(5) {
	case 0:
		return obj{{"role", pick(g, "user", "assistant", "system", "developer")}, {"content", g.text()}}
	case 1:
		return obj{{"type", "function_call"}, {"call_id", "call_" + g.ident()}, {"name", g.ident()}, {"arguments", g.arguments()}}
	case 2:
		return obj{{"type", "function_call_output"}, {"call_id", "call_" + g.ident()}, {"output", g.text()}}
	default:
		role, part := pick(g, "user", "system", "developer"), "input_text"
		if g.chance(0.3) {
			role, part = "assistant", "output_text"
		}
		return obj{{"type", "message"}, {"role", role}, {"content", g.list(1, 3, func() any { return obj{{"type", part}, {"text", g.text()}} })}}
	}
}

// embeddings is an embeddings request: text, texts, token ids, or arrays
// of them.
func (g *gen) embeddings() obj {
	ids := func() any { return g.list(1, max(1, g.length()), func() any { return g.n(200000) }) }
	var input any
	switch g.n(4) {
	case 0:
		input = g.text()
	case 1:
		input = g.list(1, 8, func() any { return g.text() })
	case 2:
		input = ids()
	default:
		input = g.list(1, 4, ids)
	}
	o := obj{{"model", pick(g, embeddingModels...)}, {"input", input}}
	if g.chance(0.3) {
		o.add("encoding_format", pick(g, "float", "base64"))
	}
	if g.chance(0.2) {
		o.add("dimensions", pick(g, 256, 512, 1024))
	}
	if g.chance(0.1) {
		o.add("user", g.text())
	}
	return o
}

// messages is an Anthropic Messages request.
func (g *gen) messages() obj {
	o := obj{{"model", pick(g, claudeModels...)}, {"max_tokens", g.capValue()}}
	turns := g.list(0, 6, func() any { return nil })
	for i := range turns {
		turns[i] = g.anthropicMessage(i%2 == 1)
	}
	o.add("messages", turns)
	if g.chance(0.5) {
		o.add("system", pick[any](g, g.text(), g.list(1, 3, func() any { return g.textBlock() })))
	}
	if g.chance(0.3) {
		o.add("tools", g.list(1, 4, g.anthropicTool))
	}
	if g.chance(0.1) {
		o.add("tool_choice", pick(g, obj{{"type", "auto"}}, obj{{"type", "any"}}, obj{{"type", "tool"}, {"name", g.ident()}}))
	}
	if g.chance(0.15) {
		o.add("thinking", obj{{"type", "enabled"}, {"budget_tokens", g.between(1024, 4096)}})
	}
	if g.chance(0.35) {
		o.add("stream", true)
	}
	if g.chance(0.1) {
		o.add("stop_sequences", g.list(1, 3, func() any { return g.text() }))
	}
	if g.chance(0.2) {
		o.add("temperature", pick[any](g, 0, 0.5, 1))
	}
	return o
}

func (g *gen) textBlock() obj {
	b := obj{{"type", "text"}, {"text", g.text()}}
	if g.chance(0.2) {
		b.add("cache_control", obj{{"type", "ephemeral"}})
	}
	return b
}

func (g *gen) anthropicMessage(assistant bool) any {
	role := "user"
	if assistant {
		role = "assistant"
	}
	if g.chance(0.5) {
		return obj{{"role", role}, {"content", g.text()}}
	}
	blocks := g.list(1, 4, func() any {
		switch {
		case g.chance(0.5):
			return g.textBlock()
		case assistant && g.chance(0.3):
			return obj{{"type", "thinking"}, {"thinking", g.text()}, {"signature", g.ident()}}
		case assistant:
			return obj{{"type", "tool_use"}, {"id", "toolu_" + g.ident()}, {"name", g.ident()}, {"input", g.object(3)}}
		default:
			content := pick[any](g, g.text(), g.list(1, 2, func() any { return g.textBlock() }))
			return obj{{"type", "tool_result"}, {"tool_use_id", "toolu_" + g.ident()}, {"content", content}, {"is_error", g.chance(0.2)}}
		}
	})
	return obj{{"role", role}, {"content", blocks}}
}

func (g *gen) anthropicTool() any {
	t := obj{}
	if g.chance(0.1) {
		t.add("type", "custom")
	}
	t.add("name", g.ident())
	if g.chance(0.7) {
		t.add("description", g.text())
	}
	t.add("input_schema", g.parameters())
	return t
}

// refusal is a change that makes a request one the meter refuses.
type refusal struct {
	why    string
	mutate func(g *gen, o obj) obj
}

// appendTo adds item to the list o holds at k (a string input becomes a
// message first).
func appendTo(o obj, k string, item any) obj {
	for i, m := range o {
		if m.k != k {
			continue
		}
		switch v := m.v.(type) {
		case []any:
			o[i].v = append(v, item)
		case string:
			o[i].v = []any{obj{{"role", "user"}, {"content", v}}, item}
		default:
			o[i].v = []any{item}
		}
		return o
	}
	return append(o, member{k, []any{item}})
}

func adding(k string, v any) func(*gen, obj) obj {
	return func(_ *gen, o obj) obj { return append(o, member{k, v}) }
}

func appending(k string, item any) func(*gen, obj) obj {
	return func(_ *gen, o obj) obj { return appendTo(o, k, item) }
}

// twice gives a top-level key twice, the second in capitals.
func twice(g *gen, o obj) obj {
	m := pick(g, o...)
	return append(o, member{strings.ToUpper(m.k), m.v})
}

var refusals = map[string][]refusal{
	"chat": {
		{"a key twice", twice},
		{"a file part", appending("messages", obj{{"role", "user"}, {"content", []any{obj{{"type", "file"}, {"file", obj{{"file_id", "file-1"}}}}}}})},
		{"web search", adding("web_search_options", obj{})},
		{"a tool the provider runs", appending("tools", obj{{"type", "web_search"}})},
	},
	"responses": {
		{"a key twice", twice},
		{"previous_response_id", adding("previous_response_id", "resp_1")},
		{"conversation", adding("conversation", obj{{"id", "conv_1"}})},
		{"prompt", adding("prompt", obj{{"id", "pmpt_1"}, {"version", "2"}})},
		{"an item reference", appending("input", obj{{"type", "item_reference"}, {"id", "msg_1"}})},
		{"a file input", appending("input", obj{{"role", "user"}, {"content", []any{obj{{"type", "input_file"}, {"file_id", "file-1"}}}}})},
		{"a tool the provider runs", appending("tools", obj{{"type", "file_search"}, {"vector_store_ids", []any{"vs_1"}}})},
	},
	"embeddings": {
		{"a key twice", twice},
	},
	"messages": {
		{"a key twice", twice},
		{"a document by address", appending("messages", obj{{"role", "user"}, {"content", []any{obj{{"type", "document"}, {"source", obj{{"type", "url"}, {"url", "https://example.com/a.pdf"}}}}}}})},
		{"a file source", appending("messages", obj{{"role", "user"}, {"content", []any{obj{{"type", "document"}, {"source", obj{{"type", "file"}, {"file_id", "file_1"}}}}}}})},
		{"a container", adding("container", "container_1")},
		{"MCP servers", adding("mcp_servers", []any{obj{{"type", "url"}, {"url", "https://mcp.example.com"}, {"name", "x"}}})},
		{"a server tool", appending("tools", obj{{"type", "web_search_20250305"}, {"name", "web_search"}})},
	},
}
