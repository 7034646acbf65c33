package finding

import (
	"cmp"
	"fmt"
	"slices"
)

// Severity says whether a finding fails the run.
type Severity string

const (
	// Error fails the run (exit 1) unless fail-on is never.
	Error Severity = "error"
	// Warning is reported but never fails the run.
	Warning Severity = "warning"
)

// Finding is one problem found in an issue. Line and Col count in the issue
// body (1-based), not in the YAML block; 0 means the finding has no place
// in the body (a label, say).
type Finding struct {
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	KeyPath  string   `json:"key_path,omitempty"`
	Line     int      `json:"line"`
	Col      int      `json:"col"`
	Message  string   `json:"message"`
}

// Format is "source:line:col: message [rule]", as editors jump; warnings say
// so.
func (f Finding) Format(source string) string {
	msg := f.Message
	if f.Severity == Warning {
		msg = "warning: " + msg
	}
	return fmt.Sprintf("%s:%d:%d: %s [%s]", source, f.Line, f.Col, msg, f.Rule)
}

// IsError reports whether f fails the run.
func (f Finding) IsError() bool { return f.Severity != Warning }

// Sort orders by position, rule, message; it drops duplicates and returns
// the slice.
func Sort(fs []Finding) []Finding {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		return cmp.Or(
			cmp.Compare(a.Line, b.Line),
			cmp.Compare(a.Col, b.Col),
			cmp.Compare(a.Rule, b.Rule),
			cmp.Compare(a.KeyPath, b.KeyPath),
			cmp.Compare(a.Message, b.Message),
		)
	})
	return slices.Compact(fs)
}

// Errors counts the findings that fail the run.
func Errors(fs []Finding) int {
	n := 0
	for _, f := range fs {
		if f.IsError() {
			n++
		}
	}
	return n
}
