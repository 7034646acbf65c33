package cli_test

import (
	"strings"
	"testing"
)

// TestStatusUsageErrors: a missing or malformed repository, an unknown
// format and a stray argument are usage errors (exit 2) that say what to
// pass, as text or as the JSON error object.
func TestStatusUsageErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"status", "--server", "http://127.0.0.1:1"}, "--repo OWNER/NAME is required"},
		{[]string{"status", "--repo", "acme", "--server", "http://127.0.0.1:1"}, `--repo must be OWNER/NAME, not "acme"`},
		{[]string{"status", "--repo", "acme/agents", "--format", "yaml"}, "--format must be text, json or markdown"},
		{[]string{"status", "--repo", "acme/agents", "extra"}, "status takes no arguments"},
		{[]string{"status", "--repo", "acme/agents"}, "no server: pass --server URL"},
	} {
		stdout, stderr, code := gns(t, nil, tt.args...)
		if code != 2 || !strings.Contains(stderr, tt.want) || stdout != "" {
			t.Errorf("%v: exit %d\nstdout %q\nstderr %q\nwant %q", tt.args, code, stdout, stderr, tt.want)
		}
	}
	stdout, _, code := gns(t, nil, "status", "--repo", "acme", "--format", "json")
	if code != 2 || !strings.HasPrefix(stdout, `{"error":{"exit_code":2,"kind":"usage"`) {
		t.Errorf("--format json: exit %d, stdout %q", code, stdout)
	}
}
