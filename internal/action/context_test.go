// Context governance: the context-pressure gate as
// comments arrive and as the checkpoint is pruned (its token figures
// checked against the load `context` prints, worked out in the test),
// located comment-protocol findings, the completion digest, and the
// context-budget metrics record.
//
// "The last 3 comments" are the last three an agent loads on entry, as
// docs/contract.md §6 says: the guard's own status, archive, digest and
// recovery comments (its marker and its author) are not among them; a
// marker in anyone else's comment proves nothing.
//
// Two measurements of one run are reported. The outputs, the metrics
// record, the log and the step summary give the load the run judged: the
// comments as it read them. The sticky status comment gives the load of the
// issue as the run left it, which is what the next agent meets and the
// next run judges (its footer names the guard's comments left out).

package action_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/gns-guard/gns-guard/internal/cli"
)

// counted caches what `gns-guard tokens` printed for a text.
var counted sync.Map

// tokens is what `gns-guard tokens FILE` prints for text, run in process.
func tokens(t *testing.T, text string) int {
	t.Helper()
	if v, ok := counted.Load(text); ok {
		return v.(int)
	}
	file := filepath.Join(t.TempDir(), "text")
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	env := cli.System()
	env.Stdout, env.Stderr = &out, io.Discard
	if code := cli.Main(context.Background(), []string{"tokens", file}, env); code != 0 {
		t.Fatalf("gns-guard tokens: exit %d", code)
	}
	n, err := strconv.Atoi(strings.TrimSpace(out.String()))
	if err != nil {
		t.Fatalf("gns-guard tokens printed %q", out.String())
	}
	counted.Store(text, n)
	return n
}

// fenced matches the checkpoint block of the tests' bodies: the lines
// between the ```yaml fence and its closing fence, the read hint left out
// (as the entry load leaves it out).
var fenced = regexp.MustCompile("(?s)```yaml\n(?:# gns-guard: comments since \\S+\n)?(checkpoint:\n.*?\n)```")

// block returns the checkpoint block of a body (its YAML lines, each with
// its newline, without the fence lines).
func block(t *testing.T, body string) string {
	t.Helper()
	m := fenced.FindAllStringSubmatch(body, -1)
	if len(m) != 1 {
		t.Fatalf("expected one ```yaml checkpoint block in the body, found %d:\n%s", len(m), body)
	}
	return m[0][1]
}

var nextEstimate = regexp.MustCompile(`(?m)^\s*next_estimated_tokens:\s*(\d+)\s*$`)

// thousands formats n as the status comment does: 12,345.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// readLines returns a file's lines.
func readLines(t *testing.T, name string) []string {
	t.Helper()
	fh, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var out []string
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
