package markdown

import "strings"

// Fence outruns any backtick run inside, so nothing closes it early.
func Fence(info, text string) string {
	longest, run := 0, 0
	for i := 0; i < len(text); i++ {
		if text[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	f := strings.Repeat("`", max(3, longest+1))
	if text != "" && !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return f + info + "\n" + text + f + "\n"
}

// OpensFence returns ``` or ~~~ (three or more, ≤ 3 spaces in), or "".
func OpensFence(line string) string {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 || len(t) < 3 || (t[0] != '`' && t[0] != '~') {
		return ""
	}
	n := 0
	for n < len(t) && t[n] == t[0] {
		n++
	}
	if n < 3 || (t[0] == '`' && strings.Contains(t[n:], "`")) {
		return ""
	}
	return t[:n]
}

// ClosesFence reports whether line closes a block opened by fence.
func ClosesFence(line, fence string) bool {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 || !strings.HasPrefix(t, fence) {
		return false
	}
	rest := strings.TrimLeft(t, fence[:1])
	return strings.TrimSpace(rest) == ""
}
