package scopes

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the scopes README.md, docs/ and examples/ show")

// block is what the table renders in a document: <!-- scopes:id -->
// text <!-- /scopes -->.
var block = regexp.MustCompile(`(?s)<!-- scopes:([a-z]+) -->(.*?)<!-- /scopes -->`)

// scopeName is a Gitea token scope written anywhere.
var scopeName = regexp.MustCompile(`\b(read|write):(activitypub|admin|issue|misc|notification|organization|package|repository|user)\b`)

// documents are the files a person reads to set gns-guard up.
func documents(t *testing.T) []string {
	t.Helper()
	root := filepath.Join("..", "..")
	files := []string{filepath.Join(root, "README.md")}
	for _, dir := range []string{"docs", "examples"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && !strings.HasSuffix(path, ".png") {
				files = append(files, path)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// TestDocsShowTheTable holds README.md, docs/ and examples/ to the table:
// every block of scopes is what the table renders (-update rewrites
// them), the table and the verbs' table are shown, and no scope is
// written outside a block but the package registry's (release.yml's own
// tokens, not gns-guard's).
func TestDocsShowTheTable(t *testing.T) {
	shown := map[string]bool{}
	for _, path := range documents(t) {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		got := block.ReplaceAllStringFunc(text, func(m string) string {
			id := block.FindStringSubmatch(m)[1]
			want, ok := Block(id)
			if !ok {
				t.Errorf("%s: <!-- scopes:%s -->: no such token or table (guard, admin, agent, init, gate, gatedagent, table, verbs)", path, id)
				return m
			}
			shown[id] = true
			return "<!-- scopes:" + id + " -->" + want + "<!-- /scopes -->"
		})
		if got != text {
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			} else {
				t.Errorf("%s shows scopes the table (internal/scopes) does not give; run\n\tgo test ./internal/scopes -run TestDocsShowTheTable -update\nand commit the result", path)
			}
		}
		for i, line := range strings.Split(block.ReplaceAllString(got, ""), "\n") {
			for _, m := range scopeName.FindAllStringSubmatch(line, -1) {
				if m[2] != "package" {
					t.Errorf("%s:%d: %s is written by hand: show the table's instead (<!-- scopes:ID --><!-- /scopes -->)", path, i+1, m[0])
				}
			}
		}
	}
	for _, id := range []string{"table", "verbs"} {
		if !shown[id] {
			t.Errorf("no document shows <!-- scopes:%s -->", id)
		}
	}
}

// TestBlock: a block of a token is its scopes in a sentence.
func TestBlock(t *testing.T) {
	if got, _ := Block("admin"); got != fmt.Sprintf("`%s`, `%s` and `%s`", Admin.Scopes[0].Name, Admin.Scopes[1].Name, Admin.Scopes[2].Name) {
		t.Errorf("Block(admin) = %q", got)
	}
	if _, ok := Block("nobody"); ok {
		t.Error("Block(nobody) is known")
	}
}
