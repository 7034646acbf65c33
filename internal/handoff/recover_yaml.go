package handoff

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/prune"
)

// builder writes the block key by key, with explanations and notes.
type builder struct {
	doc    *yaml.Node // the document: checkpoint: cp
	cp     *yaml.Node
	fields []Field
	notes  []string
}

func newBuilder() *builder {
	cp := mapping()
	return &builder{doc: &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: []*yaml.Node{str("checkpoint"), cp}}, cp: cp}
}

// note adds the notes that are not empty.
func (b *builder) note(notes ...string) {
	for _, n := range notes {
		if n != "" {
			b.notes = append(b.notes, n)
		}
	}
}

// add explains key by fields; by default, v's value and source.
func (b *builder) add(key string, v *yaml.Node, source string, fields ...Field) {
	b.cp.Content = append(b.cp.Content, str(key), v)
	if len(fields) == 0 {
		fields = []Field{{Key: key, Value: show(v), Source: source}}
	}
	b.fields = append(b.fields, fields...)
}

func (b *builder) addString(key string, p pick[string]) {
	b.add(key, str(p.Value), p.Source)
	b.note(p.Note)
}

func (b *builder) addQuoted(key string, p pick[string]) {
	b.add(key, quoted(p.Value), p.Source)
	b.note(p.Note)
}

func (b *builder) addInt(key string, p pick[int64]) {
	b.add(key, num(p.Value), p.Source)
	b.note(p.Note)
}

func (b *builder) addList(key string, p pick[[]string]) {
	b.add(key, flowList(p.Value), p.Source)
	b.note(p.Note)
}

// addBudget: baseline total, consumption plus footers since, and the
// remainder.
func (b *builder) addBudget(base Baseline, c budgetChain, how string) {
	remaining := base.Total - c.consumed
	v := mapping(str("total"), num(base.Total), str("consumed"), num(c.consumed), str("remaining"), num(remaining))
	b.add("budget", v, "",
		Field{"budget.total", fmt.Sprint(base.Total), base.Source},
		Field{"budget.consumed", fmt.Sprint(c.consumed), consumedSource(base, c, how)},
		Field{"budget.remaining", fmt.Sprint(remaining), "budget.total − budget.consumed"})
}

// addState writes state: the live labels and the assignee.
func (b *builder) addState(labels []string, assignee pick[string]) {
	ls := flowList(labels)
	b.add("state", mapping(str("labels"), ls, str("assignee"), str(assignee.Value)), "",
		Field{"state.labels", show(ls), fromLabels},
		Field{"state.assignee", assignee.Value, assignee.Source})
	b.note(assignee.Note)
}

// addHistory writes history_tail with every entry of h (nothing when there
// is none), and notes an overflow past limit for the guard to archive.
func (b *builder) addHistory(h recoveredHistory, limit int) {
	b.note(h.notes...)
	if len(h.entries) == 0 {
		return
	}
	tail := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	sources := make([]string, len(h.entries))
	for i, e := range h.entries {
		tail.Content = append(tail.Content, entry(e.Entry))
		sources[i] = e.source
	}
	value := knownCount(len(h.entries))
	if n := len(h.entries); n > limit {
		value += fmt.Sprintf(" (%d over history-tail = %d)", n-limit, limit)
		b.note(fmt.Sprintf("history_tail holds all %d known entries that are not archived, %d more than history-tail = %d: none is "+
			"dropped; the guard archives the oldest %d in its signed archive chain on its next run",
			n, n-limit, limit, n-limit))
	}
	older := "any older entries are in the guard's archive comments"
	if h.archived > 0 {
		older = knownCount(h.archived) + " already in the guard's archive comments left out"
	}
	b.add("history_tail", tail, "", Field{"history_tail", value, "in order: " + runs(sources) + "; " + older})
}

// knownCount says "1 known entry", "2 known entries".
func knownCount(n int) string {
	if n == 1 {
		return "1 known entry"
	}
	return fmt.Sprintf("%d known entries", n)
}

// runs writes repeated sources once, with a count.
func runs(sources []string) string {
	var parts []string
	for i := 0; i < len(sources); {
		j := i + 1
		for j < len(sources) && sources[j] == sources[i] {
			j++
		}
		if n := j - i; n > 1 {
			parts = append(parts, fmt.Sprintf("%s (%d entries)", sources[i], n))
		} else {
			parts = append(parts, sources[i])
		}
		i = j
	}
	return strings.Join(parts, ", ")
}

// render encodes doc, checks that it reads back as a valid checkpoint of
// issue (tailLimit is the history_tail length allowed), and returns it as
// the checkpoint's own encoder writes it, with labels as plain scalars:
// [cascade::depth-2], as the guard writes them.
func render(doc *yaml.Node, issue int64, tailLimit int, labels []string) (string, error) {
	text, err := encode(doc)
	if err != nil {
		return "", err
	}
	r := checkpoint.Parse("```yaml\n"+text+"```\n", checkpoint.Options{Issue: issue, TailLimit: tailLimit})
	if !r.Valid() {
		msg := "no checkpoint"
		for _, f := range r.Findings {
			if f.IsError() {
				msg = f.Message
				break
			}
		}
		return "", fmt.Errorf("the rebuilt checkpoint is not valid (%s)", msg)
	}
	if pretty, err := r.Checkpoint.WithLabels(labels).Encode(); err == nil {
		text = pretty
	}
	return text, nil
}

func str(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

func quoted(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s, Style: yaml.DoubleQuotedStyle}
}

func num(v int64) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: fmt.Sprint(v)}
}

func mapping(content ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: content}
}

// flowList writes strings on one line: [a, b].
func flowList(items []string) *yaml.Node {
	seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
	for _, s := range items {
		seq.Content = append(seq.Content, str(s))
	}
	return seq
}

// entry writes one line, without an empty invocation.
func entry(e prune.Entry) *yaml.Node {
	m := mapping(str("agent"), str(e.Agent), str("action"), str(e.Action))
	m.Style = yaml.FlowStyle
	if e.Invocation != "" {
		m.Content = append(m.Content, str("invocation"), str(e.Invocation))
	}
	m.Content = append(m.Content, str("timestamp"), quoted(e.Timestamp))
	return m
}

// show renders a node's value for the explanations.
func show(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode {
		return n.Value
	}
	var parts []string
	for _, c := range n.Content {
		parts = append(parts, c.Value)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func encode(doc *yaml.Node) (string, error) {
	var sb strings.Builder
	enc := yaml.NewEncoder(&sb)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return "", err
	}
	if err := enc.Close(); err != nil {
		return "", err
	}
	return sb.String(), nil
}
