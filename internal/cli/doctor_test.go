package cli

import (
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/exitcode"
)

// doctor with no token is a usage error (exit 2) that says how to give
// one; nothing is asked of the server.
func TestDoctorNeedsAToken(t *testing.T) {
	_, stderr, code := runCLI(t, nil, "", "doctor", "--repo", "o/r", "--server", "http://127.0.0.1:1")
	if code != exitcode.Usage || !strings.Contains(stderr, "doctor: no token: pass --token TOKEN or set GITEA_TOKEN") {
		t.Errorf("exit %d, %s", code, stderr)
	}
}
