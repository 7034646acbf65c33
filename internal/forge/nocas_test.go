package forge

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// An issue JSON without content_version (Forgejo's) is read as a server
// without compare-and-swap; Gitea's carries it.
func TestIssueWithoutContentVersion(t *testing.T) {
	for _, tc := range []struct {
		json  string
		noCAS bool
		cv    int
	}{
		{`{"number":3,"body":"b","labels":[],"state":"open"}`, true, 0},
		{`{"number":3,"body":"b","labels":[],"state":"open","content_version":4}`, false, 4},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(tc.json))
		}))
		c, err := New(srv.URL, "t", "o", "r")
		if err != nil {
			t.Fatal(err)
		}
		is, err := c.Issue(context.Background(), 3)
		srv.Close()
		if err != nil || is.NoCAS != tc.noCAS || is.ContentVersion != tc.cv {
			t.Errorf("%s: NoCAS %v, content version %d, err %v", tc.json, is.NoCAS, is.ContentVersion, err)
		}
	}
}
