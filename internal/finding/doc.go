// Package finding holds what the guard reports: a problem, where it is, and
// which rule found it. Text and JSON output come from the same struct.
//
// It imports nothing of the project's; everything else may import it.
package finding
