package faulttest

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/testkit/actiontest"
)

// render renders markdown as Gitea renders a comment of owner/repo.
func render(t testing.TB, f *actiontest.Repo, text string) string {
	t.Helper()
	in, err := json.Marshal(map[string]any{"Text": text, "Mode": "gfm", "Context": f.Owner + "/" + f.Name})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.S.URL+"/api/v1/markdown", bytes.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "token "+f.S.AdminToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /markdown: HTTP %d, %v: %s", resp.StatusCode, err, out)
	}
	return string(out)
}

var (
	tagRE  = regexp.MustCompile(`(?s)<[^>]*>`)
	preRE  = regexp.MustCompile(`(?s)<pre[^>]*>(.*?)</pre>`)
	rowRE  = regexp.MustCompile(`(?s)<tr>(.*?)</tr>`)
	cellRE = regexp.MustCompile(`(?s)<td[^>]*>(.*?)</td>`)
)

// text is what a reader sees of rendered HTML: the text without tags.
func text(h string) string { return html.UnescapeString(tagRE.ReplaceAllString(h, "")) }

// An archive comment as Gitea's own Markdown renderer shows it: a table
// with a row per archived entry, the hidden marker nowhere in the visible
// text, and the machine-readable JSON in a code block.
func TestArchiveRendersInGitea(t *testing.T) {
	t.Parallel()
	f := actiontest.NewRepo(t)
	n, d := f.Open(t, "rendered archive", overlongTail(t), "cascade::depth-2", "size::medium")
	archived := entries(mustDecode(t, f.Issue(t, n).Body).HistoryTail)[:4]
	if r := f.Step().Run(t, d); r.Code != 0 || r.Outputs["pruned"] != "true" {
		t.Fatalf("exit %d, pruned %q\n%s", r.Code, r.Outputs["pruned"], r.Stdout)
	}
	var body string
	for _, c := range f.Comments(t, n) {
		if c.User.Login == f.Bot && strings.Contains(c.Body, "gns-guard:archive") {
			body = c.Body
		}
	}
	if body == "" {
		t.Fatal("no archive comment")
	}
	h := render(t, f, body)

	if !strings.Contains(h, "<table>") {
		t.Fatalf("no table in the rendered archive:\n%s", h)
	}
	var rows [][]string
	for _, m := range rowRE.FindAllStringSubmatch(h, -1) {
		var cells []string
		for _, c := range cellRE.FindAllStringSubmatch(m[1], -1) {
			cells = append(cells, strings.TrimSpace(text(c[1])))
		}
		if len(cells) > 0 {
			rows = append(rows, cells)
		}
	}
	if len(rows) != len(archived) {
		t.Fatalf("the table has %d rows, want one per archived entry (%d):\n%s", len(rows), len(archived), h)
	}
	for i, e := range archived {
		if len(rows[i]) != 5 || rows[i][1] != e.Agent || rows[i][2] != e.Action || rows[i][4] != e.Timestamp {
			t.Errorf("row %d reads %q, want entry %+v", i+1, rows[i], e)
		}
	}
	visible := text(h)
	for _, hidden := range []string{"gns-guard:archive", "sha256=", "<!--"} {
		if strings.Contains(visible, hidden) {
			t.Errorf("the hidden marker shows: the rendered text holds %q:\n%s", hidden, visible)
		}
	}
	blocks := preRE.FindAllStringSubmatch(h, -1)
	var js string
	for _, b := range blocks {
		if strings.Contains(b[1], "gns_archive") {
			js = text(b[1])
		}
	}
	if js == "" {
		t.Fatalf("the machine-readable block is not a code block:\n%s", h)
	}
	var machine struct {
		Entries []json.RawMessage `json:"entries"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(js)), &machine); err != nil || len(machine.Entries) != len(archived) {
		t.Errorf("the code block does not read back as the archive's JSON (%v, %d entries):\n%s", err, len(machine.Entries), js)
	}
}
