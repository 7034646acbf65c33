package settings

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/markdown"
)

// Resolved is the layered configuration, with each value's origin.
type Resolved struct {
	// Config is the guard's configuration.
	Config config.Config
	// Token and AdminToken are the inputs token and admin-token.
	Token, AdminToken string
	// LedgerPublicKey is the file's ledger-public-key.
	LedgerPublicKey string
	// IssueNumber guards an issue the event did not name (0: the event's
	// own).
	IssueNumber int64
	// Mode is "issue" (guard one) or "dashboard" (keep the dashboard issue).
	Mode string
	// From maps every setting's Name to where its value came from:
	// "default", ".gitea/gns-guard.yml:3" (the file and the value's line),
	// "input" or "flag --name".
	From map[string]string
}

// Resolve applies the layers over the table's defaults, a later value
// winning, and checks each against its Kind, Range and layer (no secret in
// a file). The error is the first bad value's *Error; every good value is
// applied even so, so a caller can still mask its secrets.
func Resolve(layers ...Layer) (Resolved, error) {
	r := Resolved{Config: config.Config{Labels: config.DefaultLabels()}, From: make(map[string]string, len(rows))}
	for i := range rows {
		if !rows[i].set(&r, Value{Text: rows[i].Default}) {
			panic("settings: the table's default of " + rows[i].Name + " is not accepted by its own row")
		}
		r.From[rows[i].Name] = "default"
	}
	var first error
	for _, l := range layers {
		for _, name := range ordered(l) {
			v := l.Values[name]
			if err := apply(&r, l, name, v); err != nil && first == nil {
				first = err
			}
		}
	}
	return r, first
}

// apply applies one value if it checks.
func apply(r *Resolved, l Layer, name string, v Value) error {
	e := &Error{Source: l.Source, Key: name, Value: v.Text, Line: v.Line, Col: v.Col}
	if v.IsList {
		e.Value = strings.Join(v.List, ", ")
	}
	row, ok := byName[name]
	if !ok {
		e.Reason = "unknown setting" + hint(name)
		return e
	}
	e.Want = row.Range
	if row.Kind == Secret {
		e.Value = ""
	}
	if e.Reason = refusal(l.kind(), row, name, v); e.Reason != "" {
		return e
	}
	if !row.set(r, v) {
		if row.why != nil {
			e.Reason = row.why(v)
		}
		return e
	}
	r.From[name] = origin(l, name, v)
	return nil
}

// refusal says why kind k may not set s to v, or "".
func refusal(k where, s *row, name string, v Value) string {
	switch {
	case k == inFile && s.Kind == Secret:
		return secretInFile(name)
	case k == inFile && !s.File:
		return notInFile(s.Setting)
	case k == inInput && !s.Input:
		return "not an input of the action; set it in " + FileName
	case k == inFlag && !s.Flag:
		return "not a flag of this verb"
	case v.IsList && s.Kind != List && s.Kind != Map:
		return "expected " + s.Range + ", got a list"
	}
	return ""
}

// origin is as Resolved.From says it.
func origin(l Layer, name string, v Value) string {
	switch l.kind() {
	case inInput:
		return "input"
	case inFlag:
		return "flag --" + name
	}
	if v.Line > 0 {
		return l.Source + ":" + strconv.Itoa(v.Line)
	}
	return l.Source
}

// ordered sorts by file position, then table order, unknown names last.
func ordered(l Layer) []string {
	index := func(name string) int {
		for i := range rows {
			if rows[i].Name == name {
				return i
			}
		}
		return len(rows)
	}
	out := make([]string, 0, len(l.Values))
	for name := range l.Values {
		out = append(out, name)
	}
	slices.SortFunc(out, func(a, b string) int {
		va, vb := l.Values[a], l.Values[b]
		return cmp.Or(cmp.Compare(va.Line, vb.Line), cmp.Compare(va.Col, vb.Col),
			cmp.Compare(index(a), index(b)), strings.Compare(a, b))
	})
	return out
}

// Error is a refused value, key or file, and where (exit 2).
type Error struct {
	// Source is the file's path, SourceInput or SourceFlag.
	Source string
	// Key is as given; "" for the whole file.
	Key string
	// Value is the value given, as text; never a secret's.
	Value string
	// Want says what is accepted: the setting's Range.
	Want string
	// Reason, when set, says what is wrong in place of "expected Want, got
	// Value": an unknown key, a secret in the file, YAML that does not
	// parse.
	Reason string
	// Line and Col are 0 when unknown, and for inputs and flags.
	Line, Col int
}

// Error reads, for the file, `.gitea/gns-guard.yml:3:18: prune-threshold:
// expected a number above 0 up to 1, got "2"`; for an input `input
// prune-threshold: ...`; for a flag `--prune-threshold: ...`.
func (e *Error) Error() string {
	var b strings.Builder
	key := safeKey(e.Key)
	switch e.Source {
	case SourceInput:
		b.WriteString("input " + key + ": ")
	case SourceFlag:
		b.WriteString("--" + key + ": ")
	default:
		b.WriteString(e.Source)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d", e.Line)
			if e.Col > 0 {
				fmt.Fprintf(&b, ":%d", e.Col)
			}
		}
		b.WriteString(": ")
		if key != "" {
			b.WriteString(key + ": ")
		}
	}
	if e.Reason != "" {
		b.WriteString(e.Reason)
		return b.String()
	}
	got := "nothing"
	if e.Value != "" {
		got = quote(e.Value)
	}
	fmt.Fprintf(&b, "expected %s, got %s", e.Want, got)
	return b.String()
}

// safeKey shows a key as it is when it is a plain word, quoted otherwise:
// a key of the file is untrusted text.
func safeKey(k string) string {
	if k == "" || len(k) > 64 {
		return quoteIf(k)
	}
	for _, r := range k {
		if r > unicode.MaxASCII || !unicode.IsPrint(r) || unicode.IsSpace(r) || r == '"' || r == ':' {
			return quote(k)
		}
	}
	return k
}

func quoteIf(k string) string {
	if k == "" {
		return ""
	}
	return quote(k)
}

// quote makes untrusted text quoted, escaped and short.
func quote(s string) string { return markdown.QuoteN(s, 48) }
