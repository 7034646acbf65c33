package issues

import "strings"

// TaskTemplate is the name of the issue template a governed task is
// opened from: init writes it, context names it.
const TaskTemplate = "GNS task"

// TaskSize is a task's size class and its context budget.
type TaskSize struct {
	Name       string // tiny, small, medium or large
	MaxContext int64  // most tokens an agent may load
	Overhead   int64  // most tokens the checkpoint may take
	// Below is where the size's estimates end: with no size label, an
	// estimate under Below (and at or over the smaller size's) infers it.
	Below int64
	// Inferred: no size label, so next_estimated_tokens set the size.
	Inferred bool
}

// taskSizes ascend, with context budgets (docs/contract.md §3).
var taskSizes = []TaskSize{
	{Name: "tiny", MaxContext: 4000, Overhead: 500, Below: 2000},
	{Name: "small", MaxContext: 6000, Overhead: 800, Below: 5000},
	{Name: "medium", MaxContext: 10000, Overhead: 1200, Below: 10000},
	{Name: "large", MaxContext: 20000, Overhead: 1500, Below: TooLargeEstimate},
}

// TooLargeEstimate and above is a task-too-large violation.
const TooLargeEstimate = 20000

// TaskSizes returns a copy, smallest first.
func TaskSizes() []TaskSize { return append([]TaskSize(nil), taskSizes...) }

// Available is max context less the checkpoint overhead.
func (s TaskSize) Available() int64 { return s.MaxContext - s.Overhead }

// TaskSizeNamed ignores letter case and surrounding spaces.
func TaskSizeNamed(name string) (TaskSize, bool) {
	if i := SizeRank(name); i >= 0 {
		return taskSizes[i], true
	}
	return TaskSize{}, false
}

// SizeRank orders the task sizes by how much they allow: 0 for tiny up to
// 3 for large (letter case and surrounding spaces are ignored), -1 for a
// name that is no size.
func SizeRank(name string) int {
	name = strings.ToLower(strings.TrimSpace(name))
	for i, s := range taskSizes {
		if s.Name == name {
			return i
		}
	}
	return -1
}

// SizeFromLabels takes the largest size:: label, or false.
func SizeFromLabels(labels []string, prefix string) (TaskSize, bool) {
	best := -1
	for _, l := range labels {
		if name, ok := strings.CutPrefix(l, prefix); ok {
			best = max(best, SizeRank(name))
		}
	}
	if best < 0 {
		return TaskSize{}, false
	}
	return taskSizes[best], true
}

// SizeFromEstimate infers the size from next_estimated_tokens: <2k tiny,
// <5k small, <10k medium, <20k large. ok is false from TooLargeEstimate on
// (the size is then large, for the pressure arithmetic).
func SizeFromEstimate(tokens int64) (s TaskSize, ok bool) {
	s = taskSizes[len(taskSizes)-1]
	for _, size := range taskSizes {
		if tokens < size.Below {
			s = size
			break
		}
	}
	s.Inferred = true
	return s, tokens < TooLargeEstimate
}
