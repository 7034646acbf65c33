package checkpoint

import "gopkg.in/yaml.v3"

// The edits below serve the agents' exit protocol (`gns-guard report`).
// Like the rewrite methods, each returns a new Checkpoint and leaves the one
// it is called on as it was; key order, comments and the style of every
// untouched node are kept.

// WithString copies c, setting or appending the top-level key.
func (c *Checkpoint) WithString(key, v string) *Checkpoint {
	return c.edited(func(body *yaml.Node) { setString(body, key, v) })
}

// WithInt copies c, setting or appending the top-level key.
func (c *Checkpoint) WithInt(key string, v int64) *Checkpoint {
	return c.edited(func(body *yaml.Node) { setInt(body, key, v) })
}

// WithAssignee copies c with state.assignee set.
func (c *Checkpoint) WithAssignee(v string) *Checkpoint {
	return c.edited(func(body *yaml.Node) { setString(ensure(body, "state", yaml.MappingNode), "assignee", v) })
}

// WithAgentChain returns a copy of c with agent_chain set to chain, as a
// flow-style list. It does nothing when c has no agent_chain.
func (c *Checkpoint) WithAgentChain(chain []string) *Checkpoint {
	out := c.Clone()
	body := out.body()
	if body == nil {
		return out
	}
	_, seq := lookup(body, "agent_chain")
	if seq == nil {
		return out
	}
	*seq = yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle,
		HeadComment: seq.HeadComment, LineComment: seq.LineComment, FootComment: seq.FootComment}
	for _, a := range chain {
		seq.Content = append(seq.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: a})
	}
	out.refill()
	return out
}

// NewEntry is a history entry to append.
type NewEntry struct {
	Agent, Action, Invocation, Timestamp string
}

// WithEntry returns a copy of c with e appended to history_tail, else to
// history, else to a new history_tail. The entry is a flow mapping, as in
// the protocol's examples; empty fields are left out, and a history_tail
// entry needs the timestamp the caller gives.
func (c *Checkpoint) WithEntry(e NewEntry) *Checkpoint {
	key := "history_tail"
	if !c.HistoryTail.Set && c.History.Set {
		key = "history"
	}
	return c.edited(func(body *yaml.Node) {
		seq := ensure(body, key, yaml.SequenceNode)
		seq.Content = append(seq.Content, flowEntry(e))
	})
}

// flowEntry drops empty fields and double-quotes the timestamp.
func flowEntry(e NewEntry) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Style: yaml.FlowStyle}
	for _, kv := range [][2]string{{"agent", e.Agent}, {"action", e.Action}, {"invocation", e.Invocation}, {"timestamp", e.Timestamp}} {
		if kv[1] == "" {
			continue
		}
		v := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: kv[1]}
		if kv[0] == "timestamp" {
			v.Style = yaml.DoubleQuotedStyle
		}
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: kv[0]}, v)
	}
	return m
}

// setString sets key in mapping m to the string v, keeping the key's
// comments. The encoder quotes v where it would read back as another type.
func setString(m *yaml.Node, key, v string) {
	n := ensure(m, key, yaml.ScalarNode)
	n.Tag, n.Value, n.Style = "!!str", v, 0
	if v == "" {
		n.Style = yaml.DoubleQuotedStyle
	}
}
