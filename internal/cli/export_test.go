package cli

// SetExitForge replaces the client `report` and `recover` talk through
// (to inject faults) and returns a function that puts it back.
func SetExitForge(f func(server, token, owner, repo string) (ExitForge, error)) (restore func()) {
	old := exitForgeFunc
	exitForgeFunc = func(server, token, owner, repo string) (exitForge, error) { return f(server, token, owner, repo) }
	return func() { exitForgeFunc = old }
}

// ExitForge is what `report` and `recover` need of the server.
type ExitForge = exitForge
