package guard

import "strings"

// TaskSizes returns the task sizes from smallest to largest, with their
// context budgets (docs/contract.md §3). The slice is a copy.
func TaskSizes() []TaskSize {
	return append([]TaskSize(nil), taskSizes...)
}

// TaskSizeNamed returns the task size called name (tiny, small, medium or
// large; letter case and surrounding spaces are ignored), or false.
func TaskSizeNamed(name string) (TaskSize, bool) {
	name = strings.ToLower(strings.TrimSpace(name))
	for _, s := range taskSizes {
		if s.Name == name {
			return s, true
		}
	}
	return TaskSize{}, false
}

// Available is the tokens a task of this size has for work: its max
// context less the checkpoint overhead.
func (s TaskSize) Available() int64 { return s.MaxContext - s.Overhead }
