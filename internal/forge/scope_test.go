package forge_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/forge"
	"github.com/gns-guard/gns-guard/internal/issues"
)

// TestScopeRefusal: Gitea 1.26's 403 for want of a scope (its JSON, read
// by the client itself or through the SDK) is an issues.ScopeError naming
// the scopes the token lacks, which still matches ErrForbidden; another
// 403 is not.
func TestScopeRefusal(t *testing.T) {
	answer := map[string]string{
		// routers/api/v1/api.go, tokenRequiresScopes and checkTokenPublicOnly
		"/api/v1/user":                                 `{"message":"token does not have at least one of required scope(s), required=[read:user], token scope=write:issue,read:repository","url":"http://x/api/swagger"}`,
		"/api/v1/teams/7/members":                      `{"message":"token does not have at least one of required scope(s), required=[read:organization], token scope=write:issue,write:repository","url":"http://x/api/swagger"}`,
		"/api/v1/repos/o/r/collaborators/u/permission": `{"message":"token scope is limited to public repos","url":"http://x/api/swagger"}`,
		"/api/v1/repos/o/r/issues/1/lock":              `{"message":"Only repository admins may lock","url":"http://x/api/swagger"}`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		w.Write([]byte(answer[r.URL.Path]))
	}))
	defer srv.Close()
	c, err := forge.New(srv.URL, "t", "o", "r")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, err = c.Self(ctx) // through the SDK
	if se := issues.MissingScope(err); se == nil || !slices.Equal(se.Missing, []string{"read:user"}) || !errors.Is(err, issues.ErrForbidden) {
		t.Errorf("Self: %v (%+v), want a refusal for want of read:user", err, se)
	}
	if !strings.Contains(err.Error(), "lacks the scope read:user") {
		t.Errorf("Self: %q does not say which scope the token lacks", err)
	}
	_, err = c.TeamMembers(ctx, 7)
	if se := issues.MissingScope(err); se == nil || !slices.Equal(se.Missing, []string{"read:organization"}) || !errors.Is(err, issues.ErrForbidden) {
		t.Errorf("TeamMembers: %v (%+v), want a refusal for want of read:organization", err, se)
	}
	_, err = c.Permission(ctx, "u")
	if se := issues.MissingScope(err); se == nil || !se.PublicOnly {
		t.Errorf("Permission: %v (%+v), want a refusal of a public-only token", err, se)
	}
	err = c.Lock(ctx, 1, "x")
	if se := issues.MissingScope(err); se != nil || !errors.Is(err, issues.ErrForbidden) {
		t.Errorf("Lock: %v (%+v), want a refusal that is not about scopes", err, se)
	}
}
