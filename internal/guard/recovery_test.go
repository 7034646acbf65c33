package guard

import (
	"testing"

	"github.com/gns-guard/gns-guard/internal/issues"
)

// TestRepoOf: the recovery comment's command names the repository read
// from a comment's web address, or a placeholder.
func TestRepoOf(t *testing.T) {
	for _, tt := range []struct {
		url, want string
	}{
		{"https://gitea.example/acme/api/issues/42#issuecomment-7", "acme/api"},
		{"http://127.0.0.1:3000/sub/path/o/r.x/issues/42#issuecomment-1", "o/r.x"},
		{"https://gitea.example/acme/api/issues/41#issuecomment-7", "OWNER/NAME"},
		{"https://gitea.example/a b/api/issues/42", "OWNER/NAME"},
		{"", "OWNER/NAME"},
	} {
		if got := repoOf([]issues.Comment{{HTMLURL: tt.url}}, 42); got != tt.want {
			t.Errorf("repoOf(%q) = %q, want %q", tt.url, got, tt.want)
		}
	}
}
