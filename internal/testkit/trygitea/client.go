package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/gns-guard/gns-guard/internal/scopes"
)

// client talks to the server's API as its administrator.
type client struct {
	server, token string
	// user and password, when set, sign in with basic authentication
	// instead of the token (creating a token needs it).
	user, password string
}

// httpError is an answer with a status other than 2xx.
type httpError struct {
	status int
	what   string
}

func (e *httpError) Error() string { return fmt.Sprintf("HTTP %d: %s", e.status, e.what) }

// call sends a JSON request to /api/v1+path and decodes the answer into
// out (nil: dropped).
func (c client) call(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.server+"/api/v1"+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.user != "" {
		req.SetBasicAuth(c.user, c.password)
	} else {
		req.Header.Set("Authorization", "token "+c.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return &httpError{resp.StatusCode, method + " " + path + ": " + strings.TrimSpace(string(data))}
	}
	if out == nil || len(data) == 0 {
		return nil
	}
	return json.Unmarshal(data, out)
}

// run runs one chore.
func (c client) run(ctx context.Context, cmd string, args []string) error {
	switch cmd {
	case "org":
		return c.call(ctx, http.MethodPost, "/orgs", map[string]any{"username": args[0], "visibility": "public"}, nil)
	case "repo":
		return c.call(ctx, http.MethodPost, "/orgs/"+args[0]+"/repos", map[string]any{
			"name": args[1], "auto_init": true, "default_branch": "main", "readme": "Default"}, nil)
	case "user":
		names := args[1:]
		if len(names) == 1 {
			names = tokenScopes(names[0])
		}
		return c.user1(ctx, args[0], names)
	case "secret":
		value, err := io.ReadAll(io.LimitReader(os.Stdin, 1<<20))
		if err != nil {
			return err
		}
		return c.call(ctx, http.MethodPut, "/repos/"+args[0]+"/actions/secrets/"+args[1], map[string]any{"data": strings.TrimSpace(string(value))}, nil)
	case "merge":
		return c.merge(ctx, args[0], args[1])
	case "append":
		return c.appendLine(ctx, args[0], args[1], args[2])
	case "open":
		return c.open(ctx, args[0], args[1], args[2])
	case "wait":
		return c.wait(ctx, args[0])
	}
	return c.status(ctx, args[0], args[1])
}

// tokenScopes are the scopes of the table's token id, or id itself, a
// scope, when no token has that id.
func tokenScopes(id string) []string {
	for _, t := range scopes.Tokens {
		if t.ID == id {
			return t.Names()
		}
	}
	return []string{id}
}

// user1 creates an account and prints a token of it with the scopes.
func (c client) user1(ctx context.Context, login string, scopes []string) error {
	secret := make([]byte, 16)
	if _, err := rand.Read(secret); err != nil {
		return err
	}
	password := hex.EncodeToString(secret)
	if err := c.call(ctx, http.MethodPost, "/admin/users", map[string]any{
		"username": login, "email": login + "@example.invalid", "password": password, "must_change_password": false}, nil); err != nil {
		return err
	}
	as := client{server: c.server, user: login, password: password}
	var tok struct {
		SHA1 string `json:"sha1"`
	}
	if err := as.call(ctx, http.MethodPost, "/users/"+login+"/tokens", map[string]any{"name": "try", "scopes": scopes}, &tok); err != nil {
		return err
	}
	fmt.Println(tok.SHA1)
	return nil
}

// merge merges a pull request, as its Merge button does; Gitea refuses
// (405) until it has checked the pull request in the background.
func (c client) merge(ctx context.Context, repo, n string) error {
	for {
		err := c.call(ctx, http.MethodPost, "/repos/"+repo+"/pulls/"+n+"/merge", map[string]any{"Do": "merge"}, nil)
		var he *httpError
		if !errors.As(err, &he) || he.status != http.StatusMethodNotAllowed {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// appendLine adds a line to a file of main.
func (c client) appendLine(ctx context.Context, repo, path, line string) error {
	var cur struct {
		SHA     string `json:"sha"`
		Content string `json:"content"`
	}
	if err := c.call(ctx, http.MethodGet, "/repos/"+repo+"/contents/"+path+"?ref=main", nil, &cur); err != nil {
		return err
	}
	data, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(cur.Content, "\n", ""))
	if err != nil {
		return err
	}
	data = append(data, []byte(line+"\n")...)
	return c.call(ctx, http.MethodPut, "/repos/"+repo+"/contents/"+path, map[string]any{
		"content": base64.StdEncoding.EncodeToString(data), "sha": cur.SHA, "message": "Publish the guard's public key", "branch": "main"}, nil)
}

// issueTemplate is an issue template as Gitea offers it.
type issueTemplate struct {
	Name    string   `json:"name"`
	Labels  []string `json:"labels"`
	Content string   `json:"content"`
}

// templatePlaceholder is the task the "GNS task" template asks to replace.
const templatePlaceholder = "What to build or change, and how anyone can tell it is done."

// open opens an issue from the "GNS task" template, as the New issue page
// offers it, with the task written in and nothing else changed, and
// prints its number.
func (c client) open(ctx context.Context, repo, title, task string) error {
	var templates []issueTemplate
	if err := c.call(ctx, http.MethodGet, "/repos/"+repo+"/issue_templates", nil, &templates); err != nil {
		return err
	}
	i := slices.IndexFunc(templates, func(t issueTemplate) bool { return t.Name == "GNS task" })
	if i < 0 || !strings.Contains(templates[i].Content, templatePlaceholder) {
		return fmt.Errorf("%s offers no \"GNS task\" template with a task to fill in", repo)
	}
	var labels []struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
	}
	if err := c.call(ctx, http.MethodGet, "/repos/"+repo+"/labels?limit=50", nil, &labels); err != nil {
		return err
	}
	var ids []int64
	for _, l := range labels {
		if slices.Contains(templates[i].Labels, l.Name) {
			ids = append(ids, l.ID)
		}
	}
	body := strings.Replace(templates[i].Content, templatePlaceholder, task, 1)
	var issue struct {
		Number int64 `json:"number"`
	}
	if err := c.call(ctx, http.MethodPost, "/repos/"+repo+"/issues", map[string]any{"title": title, "body": body, "labels": ids}, &issue); err != nil {
		return err
	}
	fmt.Println(issue.Number)
	return nil
}
