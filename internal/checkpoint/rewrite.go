package checkpoint

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// ErrNoDocument is returned by Encode for a Checkpoint that was not decoded
// from YAML (built by hand), which has no node tree to re-encode.
var ErrNoDocument = errors.New("checkpoint: no decoded YAML document to re-encode")

// The rewrite methods never change their receiver: each returns a deep copy
// of the YAML tree with one edit, its fields read back. Edited values have
// no meaningful position; Encode, Block.Replace and Parse give them one.
// Key order, comments and style of untouched nodes are kept.

// Clone is deep: editing its tree leaves c alone.
func (c *Checkpoint) Clone() *Checkpoint {
	out := *c
	out.doc = cloneNode(c.doc, map[*yaml.Node]*yaml.Node{})
	out.History.Items = append([]Entry(nil), c.History.Items...)
	out.HistoryTail.Items = append([]Entry(nil), c.HistoryTail.Items...)
	out.AgentChain.Items = append([]String(nil), c.AgentChain.Items...)
	out.State.Labels.Items = append([]String(nil), c.State.Labels.Items...)
	return &out
}

// cloneNode deep-copies a node tree. Aliases point into the copy.
func cloneNode(n *yaml.Node, seen map[*yaml.Node]*yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	if c, ok := seen[n]; ok {
		return c
	}
	c := new(yaml.Node)
	*c = *n
	seen[n] = c
	if n.Content != nil {
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, k := range n.Content {
			c.Content[i] = cloneNode(k, seen)
		}
	}
	c.Alias = cloneNode(n.Alias, seen)
	return c
}

// WithTail returns a copy of c whose history is cut to its last n entries
// under history_tail: a `history` list is renamed in place, a longer
// `history_tail` trimmed. A kept entry without a timestamp gets now (UTC),
// which history_tail requires. It returns the cut entries, oldest first.
func (c *Checkpoint) WithTail(n int, now time.Time) (*Checkpoint, []Entry) {
	n = max(n, 0)
	out := c.Clone()
	body := out.body()
	if body == nil {
		return out, nil
	}
	var removed []Entry
	if k, v := lookup(body, "history"); v != nil && v.Kind == yaml.SequenceNode {
		removed = cut(v, c.History.Items, n)
		k.Value, k.Tag, k.Style = "history_tail", "!!str", 0
		v.Content = v.Content[max(0, len(v.Content)-n):]
		ts := now.UTC().Format(time.RFC3339)
		for _, e := range v.Content {
			tailEntry(e, ts)
		}
	} else if _, v := lookup(body, "history_tail"); v != nil && v.Kind == yaml.SequenceNode && len(v.Content) > n {
		removed = cut(v, c.HistoryTail.Items, n)
		v.Content = v.Content[len(v.Content)-n:]
	}
	out.refill()
	return out, removed
}

// cut returns the entries of list node v before its last n: the decoded
// items (with their body positions) when they match the nodes one to one,
// else read from the nodes.
func cut(v *yaml.Node, items []Entry, n int) []Entry {
	k := max(0, len(v.Content)-n)
	if len(items) == len(v.Content) {
		return append([]Entry(nil), items[:k]...)
	}
	l := filler{Block{Line: 1}}.entries(&yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
		{Kind: yaml.ScalarNode, Tag: "!!str", Value: "list"},
		{Kind: yaml.SequenceNode, Tag: "!!seq", Content: v.Content[:k]},
	}}, "list")
	return l.Items
}

// tailEntry keeps agent, action, invocation and timestamp (ts when missing).
func tailEntry(e *yaml.Node, ts string) {
	if e.Kind != yaml.MappingNode {
		return
	}
	kept := e.Content[:0:0]
	hasTime := false
	for i := 0; i+1 < len(e.Content); i += 2 {
		switch e.Content[i].Value {
		case "agent", "action", "invocation":
		case "timestamp":
			hasTime = true
		default:
			continue
		}
		kept = append(kept, e.Content[i], e.Content[i+1])
	}
	if !hasTime {
		kept = append(kept,
			&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "timestamp"},
			&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: ts, Style: yaml.DoubleQuotedStyle})
	}
	e.Content = kept
}

// WithBudget copies c with the budget set, adding missing keys.
func (c *Checkpoint) WithBudget(total, consumed, remaining int64) *Checkpoint {
	return c.edited(func(body *yaml.Node) {
		b := ensure(body, "budget", yaml.MappingNode)
		setInt(b, "total", total)
		setInt(b, "consumed", consumed)
		setInt(b, "remaining", remaining)
	})
}

// WithLabels returns a copy of c with state.labels set to labels, in the
// order given, as a flow-style list ([a, b]). A missing state is added.
func (c *Checkpoint) WithLabels(labels []string) *Checkpoint {
	return c.edited(func(body *yaml.Node) {
		state := ensure(body, "state", yaml.MappingNode)
		seq := ensure(state, "labels", yaml.SequenceNode)
		seq.Style = yaml.FlowStyle
		seq.Content = make([]*yaml.Node, len(labels))
		for i, l := range labels {
			seq.Content[i] = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: l}
		}
	})
}

// edited returns a copy of c with edit applied to its checkpoint mapping
// and its typed fields read back; a plain copy when c has no mapping.
func (c *Checkpoint) edited(edit func(body *yaml.Node)) *Checkpoint {
	out := c.Clone()
	if body := out.body(); body != nil {
		edit(body)
		out.refill()
	}
	return out
}

// Encode returns the checkpoint block's YAML: two-space indent, LF ends,
// for Block.Replace. yaml.v3 would quote every scalar holding ':' in a flow
// collection ([cascade::depth-2], {timestamp: 2026-05-16T12:58:00Z}), so
// Encode writes those collections itself when they read back the same.
func (c *Checkpoint) Encode() (string, error) {
	if c.doc == nil {
		return "", ErrNoDocument
	}
	plain, err := encodeNode(c.doc)
	if err != nil {
		return "", err
	}
	if strings.Contains(plain, flowPlaceholder) {
		return plain, nil
	}
	doc := cloneNode(c.doc, map[*yaml.Node]*yaml.Node{})
	subs := map[string]string{}
	plainFlowLists(doc, subs)
	if len(subs) == 0 {
		return plain, nil
	}
	text, err := encodeNode(doc)
	if err != nil {
		return plain, nil
	}
	for ph, list := range subs {
		if strings.Count(text, ph) != 1 {
			return plain, nil
		}
		text = strings.Replace(text, ph, list, 1)
	}
	if !sameData(c.doc, text) {
		return plain, nil
	}
	return text, nil
}

func encodeNode(doc *yaml.Node) (string, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return "", fmt.Errorf("checkpoint: encoding the YAML: %w", err)
	}
	if err := enc.Close(); err != nil {
		return "", fmt.Errorf("checkpoint: encoding the YAML: %w", err)
	}
	return buf.String(), nil
}

// flowPlaceholder stands in for flow lists while the tree is encoded.
const flowPlaceholder = "gnsguardflowlist"

// plainItem may stand unquoted in a flow list, if it reads back as a string.
var plainItem = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.:/+-]*$`)

// plainFlowLists replaces every flow collection (list or mapping) of
// comment-free scalars by a placeholder scalar, recording its text in subs:
// a scalar that was plain and reads back the same unquoted is written
// plain, the others as yaml.v3 writes them on their own.
func plainFlowLists(n *yaml.Node, subs map[string]string) {
	if n == nil {
		return
	}
	if (n.Kind == yaml.SequenceNode || n.Kind == yaml.MappingNode) && n.Style&yaml.FlowStyle != 0 && len(n.Content) > 0 {
		items := make([]string, 0, len(n.Content))
		for _, it := range n.Content {
			text, ok := flowItem(it)
			if !ok {
				items = nil
				break
			}
			items = append(items, text)
		}
		if items != nil {
			var text string
			if n.Kind == yaml.SequenceNode {
				text = "[" + strings.Join(items, ", ") + "]"
			} else {
				pairs := make([]string, 0, len(items)/2)
				for i := 0; i+1 < len(items); i += 2 {
					pairs = append(pairs, items[i]+": "+items[i+1])
				}
				text = "{" + strings.Join(pairs, ", ") + "}"
			}
			ph := fmt.Sprintf("%s%d", flowPlaceholder, len(subs))
			subs[ph] = text
			*n = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: ph,
				HeadComment: n.HeadComment, LineComment: n.LineComment, FootComment: n.FootComment,
				Line: n.Line, Column: n.Column}
			return
		}
	}
	for _, k := range n.Content {
		plainFlowLists(k, subs)
	}
}

// flowItem renders one scalar of a flow collection.
func flowItem(it *yaml.Node) (string, bool) {
	if it.Kind != yaml.ScalarNode || it.HeadComment != "" || it.LineComment != "" || it.FootComment != "" {
		return "", false
	}
	if it.Style&^yaml.FlowStyle == 0 && plainItem.MatchString(it.Value) && !strings.HasSuffix(it.Value, ":") && readsAs(it.Value, it.Tag) {
		return it.Value, true
	}
	one := *it
	text, err := encodeNode(&yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle, Content: []*yaml.Node{&one}})
	if err != nil {
		return "", false
	}
	text = strings.TrimSuffix(text, "\n")
	if !strings.HasPrefix(text, "[") || !strings.HasSuffix(text, "]") || strings.Contains(text, "\n") {
		return "", false
	}
	return text[1 : len(text)-1], true
}

// readsAs reports whether unquoted s reads back as s with tag.
func readsAs(s, tag string) bool {
	var doc yaml.Node
	if yaml.Unmarshal([]byte("["+s+"]"), &doc) != nil || len(doc.Content) != 1 {
		return false
	}
	seq := doc.Content[0]
	if seq.Kind != yaml.SequenceNode || len(seq.Content) != 1 {
		return false
	}
	v := seq.Content[0]
	return v.Kind == yaml.ScalarNode && v.Value == s && v.ShortTag() == tag
}

// sameData compares text's data with the tree's.
func sameData(doc *yaml.Node, text string) bool {
	var x, y any
	if doc.Decode(&x) != nil || yaml.Unmarshal([]byte(text), &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// body is the mapping under the root key, or nil.
func (c *Checkpoint) body() *yaml.Node {
	root := c.doc
	if root == nil {
		return nil
	}
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return nil
		}
		root = root.Content[0]
	}
	_, v := lookup(root, "checkpoint")
	if v == nil || v.Kind != yaml.MappingNode {
		return nil
	}
	return v
}

// refill rereads the typed fields from the edited tree.
func (c *Checkpoint) refill() {
	body := c.body()
	if body == nil {
		return
	}
	doc, pos := c.doc, c.Pos
	*c = Checkpoint{Pos: pos, doc: doc}
	fill(c, body, Block{Line: 1})
}

// ensure returns the value of key in mapping m, adding an empty value of
// kind when the key is missing or holds something else.
func ensure(m *yaml.Node, key string, kind yaml.Kind) *yaml.Node {
	if _, v := lookup(m, key); v != nil {
		if v.Kind == kind {
			return v
		}
		*v = yaml.Node{Kind: kind, Tag: tagOf(kind), Line: v.Line, Column: v.Column}
		return v
	}
	v := &yaml.Node{Kind: kind, Tag: tagOf(kind)}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
	return v
}

func tagOf(kind yaml.Kind) string {
	switch kind {
	case yaml.MappingNode:
		return "!!map"
	case yaml.SequenceNode:
		return "!!seq"
	}
	return "!!str"
}

// setInt keeps the key's comments.
func setInt(m *yaml.Node, key string, v int64) {
	n := ensure(m, key, yaml.ScalarNode)
	n.Tag, n.Value, n.Style = "!!int", strconv.FormatInt(v, 10), 0
}
