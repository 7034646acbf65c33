package checkpoint

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/gns-guard/gns-guard/internal/finding"
	"github.com/gns-guard/gns-guard/internal/markdown"
)

// ParseTimeout is the time limit a shell gives the parse of a (size-capped)
// block: yaml.v3's work on hostile input is bounded by the size cap, and
// this is the backstop. Parsing itself reads no clock: the caller passes
// Options.Done.
const ParseTimeout = 2 * time.Second

var checkpointKeyLine = regexp.MustCompile(`(?m)^checkpoint[ \t]*:`)

// isCheckpoint reports whether a YAML block is a checkpoint block: it has a
// top-level `checkpoint:` key. Such a block is decoded strictly; other YAML
// blocks are not the guard's business.
func isCheckpoint(content string) bool {
	return checkpointKeyLine.MatchString(content)
}

// decoder collects findings while walking one block's YAML.
type decoder struct {
	block    Block
	findings []finding.Finding
}

func (d *decoder) add(pos Pos, path, format string, args ...any) {
	d.findings = append(d.findings, finding.Finding{
		Rule:     RuleInvalid,
		Severity: finding.Error,
		KeyPath:  path,
		Line:     pos.Line,
		Col:      pos.Col,
		Message:  prefix(path) + fmt.Sprintf(format, args...),
	})
}

func prefix(path string) string {
	if path == "" {
		return ""
	}
	return path + ": "
}

func (d *decoder) pos(n *yaml.Node) Pos { return d.block.Pos(n.Line, n.Column) }

var yamlLineErr = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// decodeBlock returns nil and findings when the YAML is unreadable.
func decodeBlock(b Block, done <-chan struct{}) (*Checkpoint, []finding.Finding) {
	d := &decoder{block: b}
	doc, err := parseYAML(b.Content(), done)
	if err != nil {
		d.yamlError(err)
		return nil, d.findings
	}
	cp := d.document(doc)
	return cp, d.findings
}

// parseYAML parses text into a node tree. With done set, it gives up when
// done is closed (the caller's deadline); with done nil it has no limit.
func parseYAML(text string, done <-chan struct{}) (*yaml.Node, error) {
	if done == nil {
		return parseYAMLNow(text)
	}
	type result struct {
		doc *yaml.Node
		err error
	}
	out := make(chan result, 1)
	go func() {
		doc, err := parseYAMLNow(text)
		out <- result{doc, err}
	}()
	select {
	case r := <-out:
		return r.doc, r.err
	case <-done:
		return nil, errors.New("yaml: the block took longer than the time limit to parse; simplify it")
	}
}

// parseYAMLNow errs on a second document or a parser panic; never crashes.
func parseYAMLNow(text string) (doc *yaml.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			doc, err = nil, fmt.Errorf("yaml: the parser failed: %v", r)
		}
	}()
	doc = new(yaml.Node)
	dec := yaml.NewDecoder(strings.NewReader(text))
	if err := dec.Decode(doc); err != nil {
		return doc, err
	}
	var extra yaml.Node
	if dec.Decode(&extra) == nil {
		return doc, fmt.Errorf("yaml: line %d: a second YAML document (---) is not allowed in the checkpoint block", extra.Line)
	}
	return doc, nil
}

func (d *decoder) yamlError(err error) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	line := 1
	if m := yamlLineErr.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	if msg == "EOF" || strings.HasSuffix(msg, "EOF") {
		msg = "the block is empty"
	}
	col := 1
	if lines := strings.Split(d.block.Content(), "\n"); line-1 < len(lines) && line >= 1 {
		col += len(lines[line-1]) - len(strings.TrimLeft(lines[line-1], " "))
	}
	d.add(d.block.Pos(line, col), "", "the YAML cannot be read: %s; fix the syntax (indent with spaces, quote values that contain ': "+
		"' or start with '@', '`', '*', '&', '!', '|', '>')", msg)
}

func (d *decoder) document(doc *yaml.Node) *Checkpoint {
	root := doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			d.add(d.block.Pos(1, 1), "", "the block is empty; expected a mapping with the single key checkpoint")
			return nil
		}
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		d.add(d.pos(root), "", "expected a mapping with the single key checkpoint, found %s", Describe(root))
		return nil
	}
	var value *yaml.Node
	var keyNode *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Value == "checkpoint" && k.Kind == yaml.ScalarNode {
			if value != nil {
				d.add(d.pos(k), "checkpoint", "key %q is already defined at line %d", "checkpoint", d.pos(keyNode).Line)
				continue
			}
			keyNode, value = k, v
			continue
		}
		d.add(d.pos(k), keyPath("", k.Value), "unknown key %s at the top of the block%s; the block must hold only checkpoint",
			quote(k.Value), hint(k.Value, []string{"checkpoint"}))
	}
	if value == nil {
		return nil
	}
	d.walk(schemaV2, keyNode, value, "checkpoint")
	cp := &Checkpoint{Pos: d.pos(keyNode), doc: doc}
	fill(cp, value, d.block)
	return cp
}

// walk checks node against f, recursively, and records every problem.
func (d *decoder) walk(f field, key, n *yaml.Node, path string) {
	if n.Kind == yaml.AliasNode {
		d.alias(n, path)
		return
	}
	if isNull(n) && f.nullable {
		return
	}
	switch f.kind {
	case kindInt:
		d.integer(f, n, path)
	case kindString:
		d.str(f, n, path)
	case kindTime:
		d.timestamp(n, path)
	case kindIntOrString:
		if _, ok := intValue(n); !ok && !isString(n) {
			d.add(d.pos(n), path, "expected an integer or a string, found %s", Describe(n))
		}
	case kindStrings:
		d.strs(f, n, path)
	case kindObject:
		d.object(f, key, n, path)
	case kindObjects:
		d.objects(f, n, path)
	}
}

// alias reports an alias: a checkpoint may not hold one.
func (d *decoder) alias(n *yaml.Node, path string) {
	d.add(d.pos(n), path, "anchors and aliases are not allowed in a checkpoint; write the value out")
}

// integer checks an integer against f's constant and minimum.
func (d *decoder) integer(f field, n *yaml.Node, path string) {
	v, ok := intValue(n)
	if !ok {
		d.add(d.pos(n), path, "expected an integer, found %s", Describe(n))
		return
	}
	switch {
	case f.constant != nil && v != *f.constant:
		d.add(d.pos(n), path, "expected %d (this is schema v%d), found %d", *f.constant, *f.constant, v)
	case f.minimum != nil && v < *f.minimum:
		d.add(d.pos(n), path, "expected an integer >= %d, found %d", *f.minimum, v)
	}
}

// str checks a string, non-empty when f says so.
func (d *decoder) str(f field, n *yaml.Node, path string) {
	if !isString(n) {
		d.add(d.pos(n), path, "expected a string, found %s", Describe(n))
		return
	}
	if f.nonEmpty && strings.TrimSpace(n.Value) == "" {
		d.add(d.pos(n), path, "expected a non-empty string, found %q", n.Value)
	}
}

// timestamp checks an RFC 3339 time.
func (d *decoder) timestamp(n *yaml.Node, path string) {
	if !isString(n) && n.Tag != "!!timestamp" {
		d.add(d.pos(n), path, "expected an RFC 3339 time such as 2026-05-16T13:20:00Z, found %s", Describe(n))
		return
	}
	if _, err := time.Parse(time.RFC3339, n.Value); err != nil {
		d.add(d.pos(n), path, "expected an RFC 3339 time such as 2026-05-16T13:20:00Z, found %s", quote(n.Value))
	}
}

// strs checks a string list, each non-empty when f says so.
func (d *decoder) strs(f field, n *yaml.Node, path string) {
	if n.Kind != yaml.SequenceNode {
		d.add(d.pos(n), path, "expected a list of strings, found %s", Describe(n))
		return
	}
	for i, item := range n.Content {
		p := fmt.Sprintf("%s[%d]", path, i)
		switch {
		case item.Kind == yaml.AliasNode:
			d.alias(item, p)
		case !isString(item):
			d.add(d.pos(item), p, "expected a string, found %s", Describe(item))
		case f.nonEmpty && strings.TrimSpace(item.Value) == "":
			d.add(d.pos(item), p, "expected a non-empty string, found %q", item.Value)
		}
	}
}

// objects checks a list of mappings, each against f.
func (d *decoder) objects(f field, n *yaml.Node, path string) {
	if n.Kind != yaml.SequenceNode {
		d.add(d.pos(n), path, "expected a list of mappings (%s), found %s", strings.Join(f.keys(), ", "), Describe(n))
		return
	}
	for i, item := range n.Content {
		d.object(f, nil, item, fmt.Sprintf("%s[%d]", path, i))
	}
}

// object checks unknown, duplicate and missing keys, then values.
func (d *decoder) object(f field, key, n *yaml.Node, path string) {
	if n.Kind == yaml.AliasNode {
		d.alias(n, path)
		return
	}
	if n.Kind != yaml.MappingNode {
		d.add(d.pos(n), path, "expected a mapping with keys %s, found %s", strings.Join(f.keys(), ", "), Describe(n))
		return
	}
	seen := make(map[string]*yaml.Node, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		p := keyPath(path, k.Value)
		if k.Kind != yaml.ScalarNode {
			d.add(d.pos(k), path, "expected a plain key, found %s", Describe(k))
			continue
		}
		if prev, dup := seen[k.Value]; dup {
			d.add(d.pos(k), p, "key %s is already defined at line %d", quote(k.Value), d.pos(prev).Line)
			continue
		}
		seen[k.Value] = k
		c, ok := f.child(k.Value)
		if !ok {
			d.add(d.pos(k), p, "unknown key %s%s", quote(k.Value), hint(k.Value, f.keys()))
			continue
		}
		d.walk(c, k, v, p)
	}
	at := d.pos(n)
	if key != nil {
		at = d.pos(key)
	}
	for _, c := range f.fields {
		if c.required && seen[c.key] == nil {
			d.add(at, keyPath(path, c.key), "required key %s is missing", quote(c.key))
		}
	}
	if f.key == "checkpoint" && seen["history"] != nil && seen["history_tail"] != nil {
		d.add(d.pos(seen["history_tail"]), keyPath(path, "history_tail"), "history and history_tail cannot both be present; keep "+
			"history_tail (the last entries) and move the rest to an archive comment")
	}
}

// keyPath appends key to path. A key that is not a plain name (an unknown
// key may hold anything, newlines included) is written quoted, in
// brackets, so a key path is always one line.
func keyPath(path, key string) string {
	if !plainKey(key) {
		return path + "[" + strconv.Quote(key) + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

func plainKey(key string) bool {
	if key == "" {
		return false
	}
	for _, r := range key {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

func isString(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!str"
}

func intValue(n *yaml.Node) (int64, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" {
		return 0, false
	}
	var v int64
	if err := n.Decode(&v); err != nil {
		return 0, false
	}
	return v, true
}

// Describe names a node for a message ("found ...", "got ..."): its kind
// ("a mapping", "a list"), or a scalar's type and value, briefly
// ("integer 3", "string \"abc\"", "null (an empty value)").
func Describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias"
	case yaml.DocumentNode:
		return "a document"
	}
	switch n.Tag {
	case "!!null":
		return "null (an empty value)"
	case "!!int":
		if _, ok := intValue(n); !ok {
			return "integer " + short(n.Value) + " (out of range)"
		}
		return "integer " + short(n.Value)
	case "!!float":
		if f, err := strconv.ParseFloat(n.Value, 64); err == nil && f == math.Trunc(f) {
			return "number " + short(n.Value) + " (write integers without a decimal point)"
		}
		return "number " + short(n.Value)
	case "!!bool":
		return "boolean " + short(n.Value)
	case "!!timestamp":
		return "time " + short(n.Value)
	case "!!str":
		return "string " + quote(n.Value)
	}
	return short(n.Tag) + " " + quote(n.Value)
}

// short is quote without its quotes (an ellipsis kept).
func short(s string) string {
	q, cut := strings.CutSuffix(quote(s), "…")
	q = q[1 : len(q)-1]
	if cut {
		q += "…"
	}
	return q
}

// hint suggests the closest known key when it looks like a typo.
func hint(got string, known []string) string {
	if best, ok := finding.Nearest(got, known); ok || best != "" && strings.HasPrefix(best, strings.ToLower(got)) && len(got) >= 3 {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	return fmt.Sprintf(" (known keys: %s)", strings.Join(known, ", "))
}

// quote makes untrusted text quoted, escaped and short.
func quote(s string) string { return markdown.QuoteN(s, quoteRunes) }

// quoteRunes is how much of a value a message shows.
const quoteRunes = 48
