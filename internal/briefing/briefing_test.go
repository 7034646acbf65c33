package briefing_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/briefing"
	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/issues"
)

var shared = filepath.Join("..", "..", "testdata", "context", "shared")

// files reads the shared golden inputs, with extra files in front.
func files(extra map[string]string) func(string) ([]byte, error) {
	return func(name string) ([]byte, error) {
		if s, ok := extra[name]; ok {
			return []byte(s), nil
		}
		data, err := os.ReadFile(filepath.Join(shared, name))
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
		}
		return data, nil
	}
}

var at = time.Date(2026, 5, 16, 14, 0, 0, 0, time.UTC)

// request is an offline request on the shared body and comments.
func request(t *testing.T, read func(string) ([]byte, error)) briefing.Request {
	t.Helper()
	iss, err := briefing.ReadOffline(read, briefing.Offline{Body: "body.md", Comments: "comments.json", Guard: issues.ActionsUser})
	if err != nil {
		t.Fatal(err)
	}
	return briefing.Request{Issue: iss, Config: config.Default(), Now: func() time.Time { return at }}
}

// TestAssembleOffline: a briefing is assembled without the command line,
// and its text, JSON and records agree.
func TestAssembleOffline(t *testing.T) {
	read := files(nil)
	docs, skill, err := briefing.ReadDocs(read, []string{"bucket.go"}, "review.md")
	if err != nil {
		t.Fatal(err)
	}
	req := request(t, read)
	req.Files, req.Skill = docs, skill
	res, err := briefing.Assemble(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Fits || res.Issue != 42 || res.Text() != res.Load.Text || !strings.Contains(res.Text(), "File bucket.go") {
		t.Errorf("fits %v, issue %d, text:\n%s", res.Fits, res.Issue, res.Text())
	}
	data, err := res.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var rep map[string]any
	if err := json.Unmarshal(data, &rep); err != nil || rep["fits"] != true || rep["cost_check"] == nil || rep["next_estimate"] == nil {
		t.Errorf("JSON %s: %v", data, err)
	}
	if m := res.Metrics(); m.TS != "2026-05-16T14:00:00Z" || m.Issue != 42 || m.ContextLoaded != res.Load.Tokens || m.FilesLoaded != 1 {
		t.Errorf("metrics %+v", m)
	}
	if o := res.Overflow(); o.FilesRequested != 1 || o.Estimate != res.Load.Planned || o.Threshold != briefing.CostCheckRatio {
		t.Errorf("overflow %+v", o)
	}
}

// TestAssembleFenced: the markers wrap the text and count against the cap.
func TestAssembleFenced(t *testing.T) {
	req := request(t, files(nil))
	req.Fence, req.Cap = true, 900
	res, err := briefing.Assemble(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Fence == nil || !strings.HasPrefix(res.Text(), "::stop-commands::") || !strings.HasSuffix(res.Text(), "::\n") {
		t.Errorf("not fenced:\n%s", res.Text())
	}
}

// TestAssembleOverCap: a checkpoint that alone does not fit is a
// violation that carries its JSON report.
func TestAssembleOverCap(t *testing.T) {
	req := request(t, files(nil))
	req.Cap = 150
	_, err := briefing.Assemble(context.Background(), req)
	oc, ok := errors.AsType[*briefing.OverCapError](err)
	if !ok || exitcode.Code(err) != exitcode.Violation || oc.Report.Fits || oc.Report.OverCap == nil || oc.Report.OverCap.Cap != 150 {
		t.Fatalf("%v (exit %d)", err, exitcode.Code(err))
	}
	if !strings.HasPrefix(err.Error(), "context: issue #42: the checkpoint alone takes") || !strings.Contains(err.Error(), "Prune the issue") {
		t.Errorf("message %q", err)
	}
}

// TestAssembleNotes: a refused checkpoint's findings go to Notes before
// the refusal.
func TestAssembleNotes(t *testing.T) {
	req := request(t, files(map[string]string{"body.md": "```yaml\ncheckpoint:\n  issue: x\n```\n"}))
	var notes bytes.Buffer
	req.Notes = &notes
	_, err := briefing.Assemble(context.Background(), req)
	if exitcode.Code(err) != exitcode.Violation || !strings.Contains(err.Error(), "the checkpoint of body.md cannot be trusted") || !strings.HasPrefix(notes.String(), "body.md:") {
		t.Errorf("%v; notes %q", err, notes.String())
	}
}

// TestReadErrors: what cannot be read keeps its exit code and message.
func TestReadErrors(t *testing.T) {
	read := files(map[string]string{"obj.json": `{"id": 1}`, "logo.png": "\x89PNG\x00\x00", "bad.txt": "caf\xe9\n"})
	_, err := briefing.ReadOffline(read, briefing.Offline{Body: "body.md", Comments: "obj.json"})
	if exitcode.Code(err) != exitcode.Usage || err.Error() != "context: obj.json:1:2: expected a JSON array of {id, author, body, html_url}, found an object" {
		t.Errorf("object: %v", err)
	}
	for _, tt := range []struct {
		file, msg string
		code      int
	}{
		{"logo.png", "context: the file logo.png looks binary (a NUL byte on line 1, byte offset 4): only text files can be loaded", exitcode.Violation},
		{"bad.txt", "context: the file bad.txt is not UTF-8 text (invalid byte 0xe9 on line 1, byte offset 3): convert it to UTF-8 or leave it out", exitcode.Violation},
		{"none.go", "context: cannot read the file none.go: file does not exist", exitcode.Usage},
	} {
		_, _, err := briefing.ReadDocs(read, []string{tt.file}, "")
		if exitcode.Code(err) != tt.code || err == nil || err.Error() != tt.msg {
			t.Errorf("%s: %v (exit %d)", tt.file, err, exitcode.Code(err))
		}
	}
}
