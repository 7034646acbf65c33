// Package finding holds what the guard reports: a problem, where it is, and
// which rule found it. Text and JSON output come from the same struct.
// Nearest finds the known name closest to a mistyped one, for the "did you
// mean" hints of messages.
package finding
