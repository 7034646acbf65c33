package live

import "github.com/gns-guard/gns-guard/internal/fence"

// Fenced is issue text as a runner prints it without obeying a workflow
// command in it: between stop-commands markers.
func Fenced(text string) string { return fence.New().Wrap(text) }
