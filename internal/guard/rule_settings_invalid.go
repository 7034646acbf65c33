package guard

import "github.com/gns-guard/gns-guard/internal/checkpoint"

// checkPullSettings fails a pull request whose own settings file does not
// load: merged, every run of the guard would stop at it (a configuration
// error). The shell reads the file at the pull request's head
// (Input.PullSettings); the run judges the pull request with the default
// branch's settings, never with the file it brings.
func checkPullSettings(e *decision) []Violation {
	why := e.in.PullSettings
	if why == "" {
		return nil
	}
	return []Violation{at(checkpoint.Pos{}, "", "the settings file this pull request brings does not load: %s; merged, it would stop "+
		"every run of the guard (a configuration error, exit 2): fix it in the pull request", why)}
}
