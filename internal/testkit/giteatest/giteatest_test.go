package giteatest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/testkit/giteatest"
)

func TestMain(m *testing.M) { giteatest.Main(m) }

// get decodes GET /api/v1+path with token into out and returns the status.
func get(t *testing.T, s *giteatest.Server, token, path string, out any) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.URL+"/api/v1"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "token "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if out != nil && resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
	}
	return resp.StatusCode
}

func TestServer(t *testing.T) {
	s := giteatest.Require(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	var version struct{ Version string }
	if code := get(t, s, s.AdminToken, "/version", &version); code != http.StatusOK || version.Version != giteatest.Version {
		t.Fatalf("version: HTTP %d %q, want %s", code, version.Version, giteatest.Version)
	}

	var me struct {
		Login   string `json:"login"`
		IsAdmin bool   `json:"is_admin"`
	}
	if code := get(t, s, s.AdminToken, "/user", &me); code != http.StatusOK || me.Login != s.AdminLogin || !me.IsAdmin {
		t.Fatalf("admin token: HTTP %d %+v, want admin %s", code, me, s.AdminLogin)
	}

	owner, name := s.NewRepo(t)
	owner2, name2 := s.NewRepo(t)
	if owner != s.AdminLogin || name == name2 || owner2 != owner {
		t.Fatalf("NewRepo gave %s/%s and %s/%s", owner, name, owner2, name2)
	}
	var repo struct {
		DefaultBranch string `json:"default_branch"`
		Empty         bool   `json:"empty"`
	}
	if code := get(t, s, s.AdminToken, "/repos/"+owner+"/"+name, &repo); code != http.StatusOK || repo.Empty || repo.DefaultBranch != "main" {
		t.Fatalf("repo %s/%s: HTTP %d %+v, want initialised on main", owner, name, code, repo)
	}

	login := fmt.Sprintf("writer%d", time.Now().UnixNano()%1e6)
	token, err := s.NewUser(ctx, login, false)
	if err != nil {
		t.Fatal(err)
	}
	me.Login, me.IsAdmin = "", false
	if code := get(t, s, token, "/user", &me); code != http.StatusOK || me.Login != login || me.IsAdmin {
		t.Fatalf("user token: HTTP %d %+v, want non-admin %s", code, me, login)
	}
	if err := s.AddCollaborator(ctx, owner, name, login, giteatest.PermWrite); err != nil {
		t.Fatal(err)
	}
	var perm struct {
		Permission string `json:"permission"`
	}
	if code := get(t, s, s.AdminToken, "/repos/"+owner+"/"+name+"/collaborators/"+login+"/permission", &perm); code != http.StatusOK || perm.Permission != "write" {
		t.Fatalf("collaborator permission: HTTP %d %q, want write", code, perm.Permission)
	}

	adminLogin := login + "adm"
	adminToken, err := s.NewUser(ctx, adminLogin, true)
	if err != nil {
		t.Fatal(err)
	}
	me.Login, me.IsAdmin = "", false
	if code := get(t, s, adminToken, "/user", &me); code != http.StatusOK || !me.IsAdmin {
		t.Fatalf("admin user token: HTTP %d %+v, want admin", code, me)
	}

	seedOwner, seedRepo, number := s.SeedIssue(t, "seeded", "the body", []string{"one", "two", "three"})
	var issue struct {
		Title    string `json:"title"`
		Body     string `json:"body"`
		Comments int    `json:"comments"`
		User     struct {
			Login string `json:"login"`
		} `json:"user"`
	}
	issuePath := fmt.Sprintf("/repos/%s/%s/issues/%d", seedOwner, seedRepo, number)
	if code := get(t, s, s.AdminToken, issuePath, &issue); code != http.StatusOK || issue.Title != "seeded" || issue.Body != "the body" || issue.Comments != 3 || issue.User.Login != s.AdminLogin {
		t.Fatalf("seeded issue: HTTP %d %+v", code, issue)
	}
	var timeline []struct {
		Type string `json:"type"`
		Body string `json:"body"`
		User struct {
			Login string `json:"login"`
		} `json:"user"`
	}
	if code := get(t, s, s.AdminToken, issuePath+"/timeline", &timeline); code != http.StatusOK || len(timeline) != 3 {
		t.Fatalf("seeded timeline: HTTP %d %+v", code, timeline)
	}
	for i, want := range []string{"one", "two", "three"} {
		if e := timeline[i]; e.Type != "comment" || e.Body != want || e.User.Login != s.AdminLogin {
			t.Errorf("seeded comment %d: %+v, want %q by %s", i, e, want, s.AdminLogin)
		}
	}
	if code := get(t, s, s.AdminToken, "/repos/"+seedOwner+"/"+seedRepo, &repo); code != http.StatusOK || repo.Empty || repo.DefaultBranch != "main" {
		t.Fatalf("seeded repo: HTTP %d %+v", code, repo)
	}

	out, err := s.Gitea(ctx, "admin", "user", "list")
	if err != nil || !strings.Contains(string(out), login) {
		t.Fatalf("gitea admin user list: %v\n%s", err, out)
	}
}
