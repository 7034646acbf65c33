package checkpoint

// kind is the type of a schema v2 value.
type kind int

const (
	kindInt         kind = iota // integer
	kindString                  // string
	kindTime                    // RFC 3339 date-time string
	kindStrings                 // list of strings
	kindIntOrString             // integer or string
	kindObject                  // mapping with the listed fields
	kindObjects                 // list of mappings with the listed fields
)

// field describes one key of schema v2. The decoder and the JSON Schema are
// both driven by this table, so `check` and `schema` cannot disagree.
type field struct {
	key      string
	kind     kind
	required bool
	nonEmpty bool    // strings and list items: "" is rejected
	nullable bool    // null is accepted and read as the empty value
	minimum  *int64  // integers: smallest accepted value
	constant *int64  // integers: the only accepted value
	fields   []field // kindObject, kindObjects
	doc      string
}

func ptr(v int64) *int64 { return &v }

var entryFields = []field{
	{key: "agent", kind: kindString, required: true, nonEmpty: true, doc: "The agent that acted."},
	{key: "action", kind: kindString, required: true, nonEmpty: true, doc: "What it did, briefly."},
	{key: "invocation", kind: kindString, doc: "The invocation id."},
	{key: "timestamp", kind: kindTime, doc: "When (RFC 3339)."},
}

var tailFields = []field{
	{key: "agent", kind: kindString, required: true, nonEmpty: true, doc: "The agent that acted."},
	{key: "action", kind: kindString, required: true, nonEmpty: true, doc: "What it did, briefly."},
	{key: "invocation", kind: kindString, doc: "The invocation id, kept so pruning loses nothing."},
	{key: "timestamp", kind: kindTime, required: true, doc: "When (RFC 3339)."},
}

// schemaV2 is the value of the root key `checkpoint`.
var schemaV2 = field{key: "checkpoint", kind: kindObject, required: true, doc: "GNS-2 workflow checkpoint, schema v2.", fields: []field{
	{key: "version", kind: kindInt, required: true, constant: ptr(2), doc: "Schema version; always 2."},
	{key: "issue", kind: kindInt, required: true, minimum: ptr(0), doc: "The number of the issue that holds this checkpoint; 0 is a " +
		"template's placeholder, which the guard's first run on the issue sets to its number."},
	{key: "phase", kind: kindString, required: true, nonEmpty: true, doc: "The workflow phase."},
	{key: "depth", kind: kindInt, required: true, minimum: ptr(0), doc: "Current sub-agent nesting depth."},
	{key: "last_agent", kind: kindString, required: true, nonEmpty: true, doc: "The agent that wrote this checkpoint."},
	{key: "last_invocation", kind: kindString, required: true, nonEmpty: true, doc: "Its invocation id."},
	{key: "budget", kind: kindObject, required: true, doc: "Token budget of the current phase.", fields: []field{
		{key: "total", kind: kindInt, required: true, minimum: ptr(0), doc: "Tokens allocated."},
		{key: "consumed", kind: kindInt, required: true, minimum: ptr(0), doc: "Tokens used."},
		{key: "remaining", kind: kindInt, required: true, doc: "Tokens left: total - consumed."},
	}},
	{key: "state", kind: kindObject, required: true, doc: "Issue state as the agents see it.", fields: []field{
		{key: "labels", kind: kindStrings, required: true, nonEmpty: true, doc: "Active labels."},
		{key: "assignee", kind: kindString, required: true, nullable: true, doc: "Current agent (may be empty)."},
		{key: "milestone", kind: kindIntOrString, nullable: true, doc: "Milestone id or name."},
	}},
	{key: "history", kind: kindObjects, fields: entryFields, doc: "Full history (replaced by history_tail when pruned)."},
	{key: "history_tail", kind: kindObjects, fields: tailFields, doc: "The last entries of the history; older ones are in archive comments."},
	{key: "current_task", kind: kindString, doc: "What the next agent is to do."},
	{key: "agent_chain", kind: kindStrings, nonEmpty: true, doc: "Agents from the root to the current depth: depth + 1 entries."},
	{key: "next_agent", kind: kindString, required: true, nullable: true, doc: "The agent to run next; empty means done."},
	{key: "next_estimated_tokens", kind: kindInt, required: true, minimum: ptr(0), doc: "Estimated tokens of the next call."},
	{key: "created_at", kind: kindTime, required: true, doc: "When the checkpoint was created (RFC 3339)."},
}}

func (f field) child(key string) (field, bool) {
	for _, c := range f.fields {
		if c.key == key {
			return c, true
		}
	}
	return field{}, false
}

func (f field) keys() []string {
	keys := make([]string, len(f.fields))
	for i, c := range f.fields {
		keys[i] = c.key
	}
	return keys
}
