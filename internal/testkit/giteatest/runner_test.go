package giteatest_test

import (
	"net/http"
	"testing"

	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

func TestRunner(t *testing.T) {
	s, r := giteatest.RequireRunner(t)
	var list struct {
		Runners []struct {
			Name   string `json:"name"`
			Status string `json:"status"`
			Labels []struct {
				Name string `json:"name"`
			} `json:"labels"`
		} `json:"runners"`
	}
	if code := get(t, s, s.AdminToken, "/admin/actions/runners", &list); code != http.StatusOK {
		t.Fatalf("listing runners: HTTP %d", code)
	}
	for _, got := range list.Runners {
		if got.Name != r.Name {
			continue
		}
		if got.Status != "online" || len(got.Labels) != 1 || got.Labels[0].Name != "ubuntu-latest" {
			t.Fatalf("runner %s: status %s, labels %+v; want online with the one label ubuntu-latest", r.Name, got.Status, got.Labels)
		}
		return
	}
	t.Fatalf("runner %s is not registered: %+v\n%s", r.Name, list.Runners, r.LogTail())
}
