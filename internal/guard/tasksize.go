package guard

import "strings"

// TaskSize is a task's size class and its context budget.
type TaskSize struct {
	Name       string // tiny, small, medium or large
	MaxContext int64  // most tokens an agent may load
	Overhead   int64  // most tokens the checkpoint may take
	// Inferred is true when no size label was set and the size came from
	// next_estimated_tokens.
	Inferred bool
}

var taskSizes = []TaskSize{
	{Name: "tiny", MaxContext: 4000, Overhead: 500},
	{Name: "small", MaxContext: 6000, Overhead: 800},
	{Name: "medium", MaxContext: 10000, Overhead: 1200},
	{Name: "large", MaxContext: 20000, Overhead: 1500},
}

// tooLarge is where inferred sizes end: an estimate at or above it is a
// task-too-large violation.
const tooLarge = 20000

// sizeFromLabels returns the size named by size:: labels (the largest if
// several are set), or false.
func sizeFromLabels(labels []string, prefix string) (TaskSize, bool) {
	best := -1
	for _, l := range labels {
		name, ok := strings.CutPrefix(l, prefix)
		if !ok {
			continue
		}
		for i, s := range taskSizes {
			if s.Name == strings.ToLower(strings.TrimSpace(name)) && i > best {
				best = i
			}
		}
	}
	if best < 0 {
		return TaskSize{}, false
	}
	return taskSizes[best], true
}

// sizeFromEstimate infers the size from next_estimated_tokens: <2k tiny,
// <5k small, <10k medium, <20k large. ok is false from 20k on (the size is
// then large, for the pressure arithmetic).
func sizeFromEstimate(tokens int64) (s TaskSize, ok bool) {
	switch {
	case tokens < 2000:
		s = taskSizes[0]
	case tokens < 5000:
		s = taskSizes[1]
	case tokens < 10000:
		s = taskSizes[2]
	default:
		s = taskSizes[3]
	}
	s.Inferred = true
	return s, tokens < tooLarge
}
