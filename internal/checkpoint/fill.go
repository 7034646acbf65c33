package checkpoint

import "gopkg.in/yaml.v3"

// filler copies well-typed values out of a node tree into a Checkpoint.
// Values of the wrong type are left unset: the decoder has reported them.
type filler struct{ b Block }

func fill(cp *Checkpoint, n *yaml.Node, b Block) {
	f := filler{b}
	if n.Kind != yaml.MappingNode {
		return
	}
	cp.Version = f.int(n, "version")
	cp.Issue = f.int(n, "issue")
	cp.Phase = f.str(n, "phase")
	cp.Depth = f.int(n, "depth")
	cp.LastAgent = f.str(n, "last_agent")
	cp.LastInvocation = f.str(n, "last_invocation")
	cp.CurrentTask = f.str(n, "current_task")
	cp.NextAgent = f.str(n, "next_agent")
	cp.NextEstimatedTokens = f.int(n, "next_estimated_tokens")
	cp.CreatedAt = f.str(n, "created_at")
	if k, v := lookup(n, "budget"); v != nil && v.Kind == yaml.MappingNode {
		cp.Budget = Budget{
			Pos:       f.pos(k),
			Set:       true,
			Total:     f.int(v, "total"),
			Consumed:  f.int(v, "consumed"),
			Remaining: f.int(v, "remaining"),
		}
	}
	if k, v := lookup(n, "state"); v != nil && v.Kind == yaml.MappingNode {
		cp.State = State{
			Pos:       f.pos(k),
			Set:       true,
			Labels:    f.strs(v, "labels"),
			Assignee:  f.str(v, "assignee"),
			Milestone: f.scalar(v, "milestone"),
		}
	}
	cp.History = f.entries(n, "history")
	cp.HistoryTail = f.entries(n, "history_tail")
	cp.AgentChain = f.strs(n, "agent_chain")
}

// lookup returns key's key and value nodes in m.
func lookup(m *yaml.Node, key string) (k, v *yaml.Node) {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i], m.Content[i+1]
		}
	}
	return nil, nil
}

func (f filler) pos(n *yaml.Node) Pos { return f.b.Pos(n.Line, n.Column) }

func (f filler) int(m *yaml.Node, key string) Int {
	_, v := lookup(m, key)
	if v == nil {
		return Int{}
	}
	i, ok := intValue(v)
	return Int{Value: i, Pos: f.pos(v), Set: ok}
}

func (f filler) str(m *yaml.Node, key string) String {
	_, v := lookup(m, key)
	if v == nil {
		return String{}
	}
	switch {
	case isString(v) || v.Tag == "!!timestamp":
		return String{Value: v.Value, Pos: f.pos(v), Set: true}
	case isNull(v):
		return String{Pos: f.pos(v), Set: true}
	}
	return String{Pos: f.pos(v)}
}

func (f filler) scalar(m *yaml.Node, key string) String {
	_, v := lookup(m, key)
	if v == nil || v.Kind != yaml.ScalarNode || isNull(v) {
		return String{}
	}
	return String{Value: v.Value, Pos: f.pos(v), Set: true}
}

func (f filler) strs(m *yaml.Node, key string) List[String] {
	return list(f, m, key, func(item *yaml.Node) (String, bool) {
		return String{Value: item.Value, Pos: f.pos(item), Set: true}, isString(item)
	})
}

func (f filler) entries(m *yaml.Node, key string) List[Entry] {
	return list(f, m, key, f.entry)
}

// entry is not ok for an item that is not a mapping.
func (f filler) entry(item *yaml.Node) (e Entry, ok bool) {
	if item.Kind != yaml.MappingNode {
		return Entry{}, false
	}
	return Entry{
		Pos:        f.pos(item),
		Agent:      f.str(item, "agent"),
		Action:     f.str(item, "action"),
		Invocation: f.str(item, "invocation"),
		Timestamp:  f.str(item, "timestamp"),
	}, true
}

// list reads the list under key in mapping m, one item at a time: read
// says whether an item is of the list's type (one that is not is left
// out).
func list[T any](f filler, m *yaml.Node, key string, read func(item *yaml.Node) (T, bool)) List[T] {
	k, v := lookup(m, key)
	if v == nil || v.Kind != yaml.SequenceNode {
		return List[T]{}
	}
	l := List[T]{Pos: f.pos(k), Set: true}
	for _, item := range v.Content {
		if t, ok := read(item); ok {
			l.Items = append(l.Items, t)
		}
	}
	return l
}
