package cli

import "github.com/gns-guard/gns-guard/internal/port"

// SetExitForge replaces the client the verbs that work on a live issue
// talk through (to inject faults) and returns a function that puts it back.
func SetExitForge(f func(server, token, owner, repo string) (ExitForge, error)) (restore func()) {
	old := connectForge
	connectForge = func(server, token, owner, repo string) (port.Forge, error) { return f(server, token, owner, repo) }
	return func() { connectForge = old }
}

// ExitForge is what `report` and `recover` need of the server.
type ExitForge = port.Forge
