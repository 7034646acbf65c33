package entryload

import (
	"strings"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/markdown"
)

// TaskHeading is the task section's heading in init's issue template.
const TaskHeading = "Task"

// TaskSection returns the text under the body's first "# Task" or "## Task"
// heading (any case), up to the next heading of its level or higher, or the
// checkpoint block. Headings in fenced code do not count. "" when there is
// no such section or it is blank.
func TaskSection(body string) string {
	end := len(body)
	if blocks := checkpoint.Find(body, len(body)+1); len(blocks) > 0 {
		end = blocks[0].Start
	}
	start, level := -1, 0
	var fence string
	at := 0
	for at < end {
		line, next := lineAt(body, at)
		switch {
		case fence != "":
			if markdown.ClosesFence(line, fence) {
				fence = ""
			}
		case markdown.OpensFence(line) != "":
			fence = markdown.OpensFence(line)
		case start < 0:
			if n, title := atxHeading(line); n > 0 && n <= 2 && strings.EqualFold(title, TaskHeading) {
				start, level = next, n
			}
		default:
			if n, _ := atxHeading(line); n > 0 && n <= level {
				end = at
			}
		}
		at = next
	}
	if start < 0 || start >= end {
		return ""
	}
	return strings.TrimSpace(strings.ReplaceAll(body[start:end], "\r\n", "\n"))
}

// lineAt returns the line at at, without line end, and the next offset.
func lineAt(body string, at int) (string, int) {
	i := strings.IndexByte(body[at:], '\n')
	if i < 0 {
		return strings.TrimSuffix(body[at:], "\r"), len(body)
	}
	return strings.TrimSuffix(body[at:at+i], "\r"), at + i + 1
}

// atxHeading reads an ATX heading (≤ 3 spaces indent): level, text, no
// closing #s.
func atxHeading(line string) (level int, title string) {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 {
		return 0, ""
	}
	for level < len(t) && t[level] == '#' {
		level++
	}
	if level == 0 || level > 6 || (level < len(t) && t[level] != ' ' && t[level] != '\t') {
		return 0, ""
	}
	title = strings.TrimSpace(t[level:])
	title = strings.TrimSpace(strings.TrimRight(title, "#"))
	return level, title
}
