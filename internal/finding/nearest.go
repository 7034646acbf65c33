package finding

import "strings"

// Nearest returns the known name got is most likely a typo of: the
// nearest by edit distance (case aside) when it is close enough — at most a
// third of got's length, between 1 and 3 edits — for a "did you mean" hint.
func Nearest(got string, known []string) (string, bool) {
	low := strings.ToLower(got)
	best, bestD := "", 1<<30
	for _, k := range known {
		if d := distance(low, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best, best != "" && bestD <= max(1, min(3, len(got)/3))
}

// distance is Levenshtein in bytes; a long a is far from all.
func distance(a, b string) int {
	if len(a) > 64 {
		return len(a)
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
