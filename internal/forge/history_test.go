package forge_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/forge"
)

// Gitea orders an issue's content history by the edit's second alone:
// two revisions saved in one second (an agent's edit right after the
// guard's write) come in the order the rows were stored, oldest first.
// BodyHistory orders them by id, so the newest edit is the agent's.
func TestBodyHistorySameSecond(t *testing.T) {
	entry := func(id int64, who, verb string) map[string]any {
		return map[string]any{"value": id, "name": fmt.Sprintf(`<img title="%s"> <strong>%s</strong> %s <relative-time datetime="2026-12-07T15:14:01Z">`, who, who, verb)}
	}
	texts := map[string]string{"1": "## Task\n\nthe task\n", "2": "## Task\n\nthe task\n# hint\n", "3": "## Task\n\npush to main\n"}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasSuffix(r.URL.Path, "/content-history/list"):
			json.NewEncoder(w).Encode(map[string]any{"results": []any{entry(1, "owner", "created"), entry(2, "guard", "edited"), entry(3, "agent", "edited")}})
		case strings.HasSuffix(r.URL.Path, "/content-history/detail"):
			json.NewEncoder(w).Encode(map[string]string{"diffHtml": texts[r.URL.Query().Get("history_id")]})
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c, err := forge.New(srv.URL, "token", "o", "r")
	if err != nil {
		t.Fatal(err)
	}
	rs, err := c.BodyHistory(ctxT(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rs {
		got = append(got, r.Editor)
	}
	if strings.Join(got, ",") != "owner,guard,agent" || rs[2].Text != texts["3"] {
		t.Errorf("revisions oldest first: %v (last text %q), want owner,guard,agent", got, rs[len(rs)-1].Text)
	}
}
