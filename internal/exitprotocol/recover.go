package exitprotocol

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
)

// Baseline is the last checkpoint state recovery can trust: the guard's
// ledger, or the budget an archive of the guard recorded.
type Baseline struct {
	// Source says where it was read, for the explanations: "the guard's
	// ledger in its status comment 12 (signed)".
	Source string
	// Version and Issue are the checkpoint's (2 and the issue's number when
	// the source does not hold them).
	Version, Issue int64
	Phase          string
	Total          int64
	Consumed       int64
	Remaining      int64
	// Written is when the state was recorded: agent comments posted after
	// it are the events since, unless the footers' budgets show where the
	// state stands among them (see Reconstruct).
	Written time.Time
}

// Event is one agent comment with a readable GNS_EVENT footer.
type Event struct {
	CommentID int64
	Author    string
	Created   time.Time
	Footer    Footer
}

// Field is one key of the proposed checkpoint, its value as written, and
// where it came from.
type Field struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Source string `json:"source"`
}

// Proposal is a rebuilt checkpoint.
type Proposal struct {
	// YAML is the block's content (root key checkpoint), ready to paste
	// between ```yaml fences.
	YAML string `json:"yaml"`
	// Fields explain every key, in the block's order.
	Fields []Field `json:"fields"`
	// Since are the comment ids of the footers whose consumption was added
	// to the baseline, in order.
	Since []int64 `json:"since"`
	// Notes are what the reader must check: gaps in the footers' budget
	// chain, values that could not be recovered.
	Notes []string `json:"notes,omitempty"`
}

// RecoverInput is everything Reconstruct reads.
type RecoverInput struct {
	Issue    int64
	Baseline Baseline
	// Events are the agent comments with readable footers, oldest first.
	Events []Event
	// Broken is what can still be read of the body's checkpoint (an
	// invalid one decodes partly), or nil.
	Broken *checkpoint.Checkpoint
	// Labels are the issue's live labels.
	Labels []string
	// TailLimit is how many entries history_tail holds (3).
	TailLimit int
	// Created stands in for created_at when the body does not give it.
	Created time.Time
}

// Reconstruct rebuilds a checkpoint from the baseline plus the footers of
// the agent comments since, in order. The events since the baseline start
// after the last footer whose budget.remaining is the baseline's (in its
// phase): that result is the one the baseline accounts for; when no footer
// matches, after the baseline's time. Every footer since adds its
// budget.consumed. The proposal always reads back as a valid checkpoint.
func Reconstruct(in RecoverInput) (*Proposal, error) {
	b := in.Baseline
	p := &Proposal{}
	start := -1
	for i, e := range in.Events {
		if e.Footer.Budget.Remaining == b.Remaining && e.Footer.Phase == b.Phase && !e.Created.After(b.Written.Add(time.Minute)) {
			start = i
		}
	}
	var since []Event
	how := ""
	if start >= 0 {
		since = in.Events[start+1:]
		how = fmt.Sprintf("after comment %d, whose footer's budget.remaining %d is the baseline's", in.Events[start].CommentID, b.Remaining)
	} else {
		for _, e := range in.Events {
			if e.Created.After(b.Written) {
				since = append(since, e)
			}
		}
		how = "posted after " + b.Written.UTC().Format(time.RFC3339)
	}
	consumed, remaining := b.Consumed, b.Remaining
	var sources []string
	for _, e := range since {
		f := e.Footer
		if f.Budget.Before != remaining {
			p.Notes = append(p.Notes, fmt.Sprintf("comment %d (%s, %s) says %d tokens remained before it, the chain says %d: tokens were spent or granted that no footer shows; check budget.consumed",
				e.CommentID, f.Agent, f.Invocation, f.Budget.Before, remaining))
		}
		consumed += f.Budget.Consumed
		remaining = b.Total - consumed
		p.Since = append(p.Since, e.CommentID)
		sources = append(sources, fmt.Sprintf("%d (comment %d)", f.Budget.Consumed, e.CommentID))
	}
	var last *Event
	if len(in.Events) > 0 {
		last = &in.Events[len(in.Events)-1]
	}
	lastSince := last
	if len(since) == 0 {
		lastSince = nil
	}
	br := in.Broken
	if br == nil {
		br = &checkpoint.Checkpoint{} // nothing set
	}
	body := func(s checkpoint.String) (string, bool) { return s.Value, s.Set }
	bodyInt := func(v checkpoint.Int) (int64, bool) { return v.Value, v.Set }

	doc := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	cp := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	doc.Content = []*yaml.Node{str("checkpoint"), cp}
	add := func(key string, v *yaml.Node, source string) {
		cp.Content = append(cp.Content, str(key), v)
		p.Fields = append(p.Fields, Field{Key: key, Value: show(v), Source: source})
	}
	baseSrc := b.Source
	add("version", num(b.Version), baseSrc)
	add("issue", num(b.Issue), baseSrc)

	phase, phaseSrc := b.Phase, baseSrc
	if lastSince != nil {
		phase, phaseSrc = lastSince.Footer.Phase, footerSrc(*lastSince, "phase")
	}
	add("phase", str(phase), phaseSrc)

	var depth int64
	switch {
	case last != nil:
		depth = last.Footer.Depth
		add("depth", num(depth), footerSrc(*last, "depth"))
	default:
		if d, ok := bodyInt(br.Depth); ok && d >= 0 {
			depth = d
			add("depth", num(d), "the broken body (no agent comment says otherwise)")
		} else {
			add("depth", num(0), "not recoverable: no agent comment and no readable depth in the body; check it")
			p.Notes = append(p.Notes, "depth could not be recovered: 0 is a guess")
		}
	}
	switch {
	case last != nil:
		add("last_agent", str(last.Footer.Agent), footerSrc(*last, "agent"))
		add("last_invocation", str(last.Footer.Invocation), footerSrc(*last, "invocation"))
	default:
		la, ok1 := body(br.LastAgent)
		li, ok2 := body(br.LastInvocation)
		if !ok1 || la == "" || !ok2 || li == "" {
			la, li = "recovery", "recovered"
			p.Notes = append(p.Notes, "last_agent and last_invocation could not be recovered: placeholders written")
		}
		add("last_agent", str(la), "the broken body")
		add("last_invocation", str(li), "the broken body")
	}

	budget := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	budget.Content = []*yaml.Node{str("total"), num(b.Total), str("consumed"), num(consumed), str("remaining"), num(b.Total - consumed)}
	consumedSrc := fmt.Sprintf("%s: %d", baseSrc, b.Consumed)
	if len(sources) > 0 {
		consumedSrc += " + footers " + how + ": " + strings.Join(sources, " + ")
	} else {
		consumedSrc += "; no agent footer since (" + how + ")"
	}
	cp.Content = append(cp.Content, str("budget"), budget)
	p.Fields = append(p.Fields,
		Field{"budget.total", fmt.Sprint(b.Total), baseSrc},
		Field{"budget.consumed", fmt.Sprint(consumed), consumedSrc},
		Field{"budget.remaining", fmt.Sprint(b.Total - consumed), "budget.total − budget.consumed"})

	labels := slices.Clone(in.Labels)
	slices.Sort(labels)
	labels = slices.Compact(labels)
	lseq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
	for _, l := range labels {
		lseq.Content = append(lseq.Content, str(l))
	}
	assignee, aSrc := "", "not recoverable: empty"
	if a, ok := body(br.State.Assignee); ok {
		assignee, aSrc = a, "the broken body"
	} else if last != nil {
		assignee, aSrc = last.Footer.NextAgent, footerSrc(*last, "next_agent")
	}
	state := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	state.Content = []*yaml.Node{str("labels"), lseq, str("assignee"), str(assignee)}
	cp.Content = append(cp.Content, str("state"), state)
	p.Fields = append(p.Fields,
		Field{"state.labels", show(lseq), "the issue's live labels"},
		Field{"state.assignee", assignee, aSrc})

	// The tail: the body's readable entries, then the results the footers
	// show that it lacks, the last limit of them.
	limit := max(in.TailLimit, 1)
	type tailEntry struct {
		node   *yaml.Node
		source string
	}
	var all []tailEntry
	seen := map[string]bool{}
	for _, e := range br.Entries() {
		if e.Agent.Value == "" || e.Action.Value == "" {
			continue
		}
		ts := e.Timestamp.Value
		if _, err := time.Parse(time.RFC3339, ts); err != nil {
			ts = in.Created.UTC().Format(time.RFC3339)
		}
		if e.Invocation.Value != "" {
			seen[e.Invocation.Value] = true
		}
		all = append(all, tailEntry{entry(e.Agent.Value, e.Action.Value, e.Invocation.Value, ts), "the broken body"})
	}
	for _, e := range in.Events {
		if seen[e.Footer.Invocation] {
			continue
		}
		action := e.Footer.Action
		if action == "" {
			action = fmt.Sprintf("%s: %s", e.Footer.EventType, e.Footer.Verdict)
		}
		all = append(all, tailEntry{entry(e.Footer.Agent, action, e.Footer.Invocation, e.Created.UTC().Format(time.RFC3339)), fmt.Sprintf("the footer of comment %d", e.CommentID)})
	}
	if len(all) > 0 {
		tail := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		var srcs []string
		for _, te := range all[max(0, len(all)-limit):] {
			tail.Content = append(tail.Content, te.node)
			srcs = append(srcs, te.source)
		}
		cp.Content = append(cp.Content, str("history_tail"), tail)
		p.Fields = append(p.Fields, Field{"history_tail", fmt.Sprintf("%d of %d known entries", len(tail.Content), len(all)),
			"in order: " + strings.Join(srcs, ", ") + "; older entries stay in the archive comments and the agents' comments"})
	}
	if t, ok := body(br.CurrentTask); ok && t != "" {
		add("current_task", str(t), "the broken body")
	}
	if br.AgentChain.Set && int64(len(br.AgentChain.Items)) == depth+1 {
		seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
		for _, a := range br.AgentChain.Items {
			seq.Content = append(seq.Content, str(a.Value))
		}
		add("agent_chain", seq, "the broken body (its length fits depth)")
	}
	switch {
	case last != nil:
		add("next_agent", str(last.Footer.NextAgent), footerSrc(*last, "next_agent"))
		add("next_estimated_tokens", num(last.Footer.NextEstimate), footerSrc(*last, "next_estimated_tokens"))
	default:
		na, _ := body(br.NextAgent)
		ne, _ := bodyInt(br.NextEstimatedTokens)
		add("next_agent", str(na), "the broken body")
		add("next_estimated_tokens", num(max(ne, 0)), "the broken body")
	}
	created, cSrc := in.Created.UTC().Format(time.RFC3339), "not recoverable: the time of the guard's first record on the issue"
	if c, ok := body(br.CreatedAt); ok {
		if _, err := time.Parse(time.RFC3339, c); err == nil {
			created, cSrc = c, "the broken body"
		}
	}
	add("created_at", quoted(created), cSrc)

	text, err := encode(doc)
	if err != nil {
		return nil, err
	}
	r := checkpoint.Parse("```yaml\n"+text+"```\n", checkpoint.Options{Issue: in.Issue, TailLimit: limit})
	if !r.Valid() {
		msg := "no checkpoint"
		if len(r.Findings) > 0 {
			msg = r.Findings[0].Message
		}
		return nil, fmt.Errorf("the rebuilt checkpoint is not valid (%s)", msg)
	}
	// Written back through the checkpoint's own encoder with the labels
	// as plain scalars: [cascade::depth-2], as the guard writes them.
	if pretty, err := r.Checkpoint.WithLabels(labels).Encode(); err == nil {
		text = pretty
	}
	p.YAML = text
	return p, nil
}

// ErrNoBaseline says recovery found no state it can trust.
var ErrNoBaseline = errors.New("no trusted state: the guard's status comment holds no ledger that verifies, and no archive of the guard's was found")

func footerSrc(e Event, key string) string {
	return fmt.Sprintf("the footer of comment %d (%s, %s): %s", e.CommentID, e.Footer.Agent, e.Footer.Invocation, key)
}

func str(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

func quoted(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s, Style: yaml.DoubleQuotedStyle}
}

func num(v int64) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: fmt.Sprint(v)}
}

func entry(agent, action, invocation, ts string) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Style: yaml.FlowStyle}
	m.Content = []*yaml.Node{str("agent"), str(agent), str("action"), str(action)}
	if invocation != "" {
		m.Content = append(m.Content, str("invocation"), str(invocation))
	}
	m.Content = append(m.Content, str("timestamp"), quoted(ts))
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
