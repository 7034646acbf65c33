package cli

import (
	"slices"
	"strings"
	"testing"
)

// reportArgs are a complete report's flags, with no server: whatever
// report refuses here, it refuses before it connects.
var reportArgs = []string{"report", "--repo", "o/r", "--issue", "2", "--agent", "dev", "--invocation", "i1", "--consumed", "100", "--action", "did it"}

// Every file input is capped and must be text: report's --result-file
// (which became a comment of any size) and the body check and prune read.
func TestFileInputsAreCappedText(t *testing.T) {
	files := map[string]string{
		"big.txt":  strings.Repeat("a result line of an agent\n", 2<<20/26),
		"latin1":   "r\xe9sultat\n",
		"nul.bin":  "PK\x03\x04\x00\x00",
		"latin.md": "caf\xe9\n",
	}
	cases := []struct {
		args []string
		want string
	}{
		{slices.Concat(reportArgs, []string{"--result-file", "big.txt"}), "report: the result file big.txt is 2,097,134 bytes, over the 983,040 bytes it may hold"},
		{slices.Concat(reportArgs, []string{"--result-file", "latin1"}), "report: the result file latin1 is not UTF-8 text (invalid byte 0xe9 on line 1, byte offset 1)"},
		{slices.Concat(reportArgs, []string{"--result-file", "nul.bin"}), "report: the result file nul.bin looks binary (a NUL byte on line 1, byte offset 4)"},
		{[]string{"check", "latin.md"}, "check: the issue body latin.md is not UTF-8 text (invalid byte 0xe9 on line 1, byte offset 3)"},
		{[]string{"prune", "latin.md"}, "prune: the issue body latin.md is not UTF-8 text"},
	}
	for _, c := range cases {
		_, stderr, code := runCLI(t, files, "", c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and %q", strings.Join(c.args, " "), code, stderr, c.want)
		}
	}
}
