package cli

import (
	"bytes"
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
)

// reportArgs are a complete report's flags, with no server: whatever
// report refuses here, it refuses before it connects.
var reportArgs = []string{"report", "--repo", "o/r", "--issue", "2", "--agent", "dev", "--invocation", "i1", "--consumed", "100", "--action", "did it"}

// Every file input is capped and must be text: report's --result-file
// (which became a comment of any size) and the body check and prune read.
// A file over its cap is a usage error (2); one that is not text is a
// finding about the input (1). Neither is followed by the usage hint: the
// help would not fix the file.
func TestFileInputsAreCappedText(t *testing.T) {
	files := map[string]string{
		"big.txt":  strings.Repeat("a result line of an agent\n", 2<<20/26),
		"latin1":   "r\xe9sultat\n",
		"nul.bin":  "PK\x03\x04\x00\x00",
		"latin.md": "caf\xe9\n",
	}
	cases := []struct {
		args []string
		code int
		want string
	}{
		{slices.Concat(reportArgs, []string{"--result-file", "big.txt"}), 2, "report: the result file big.txt is 2,097,134 bytes, over the 983,040 bytes it may hold"},
		{slices.Concat(reportArgs, []string{"--result-file", "latin1"}), 1, "report: the result file latin1 is not UTF-8 text (invalid byte 0xe9 on line 1, byte offset 1)"},
		{slices.Concat(reportArgs, []string{"--result-file", "nul.bin"}), 1, "report: the result file nul.bin looks binary (a NUL byte on line 1, byte offset 4)"},
		{[]string{"check", "latin.md"}, 1, "check: the issue body latin.md is not UTF-8 text (invalid byte 0xe9 on line 1, byte offset 3)"},
		{[]string{"prune", "latin.md"}, 1, "prune: the issue body latin.md is not UTF-8 text"},
		{[]string{"check", "missing.md"}, 2, "cannot read missing.md"},
	}
	for _, c := range cases {
		_, stderr, code := runCLI(t, files, "", c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) || strings.Contains(stderr, "for usage") {
			t.Errorf("%s: exit %d, stderr %q; want exit %d and %q, no usage hint", strings.Join(c.args, " "), code, stderr, c.code, c.want)
		}
	}
}

// A mistyped verb or flag is answered with the closest one; a word far
// from every name gets no guess.
func TestDidYouMean(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"chek", "a.md"}, `unknown verb "chek" (did you mean check?); the verbs are`},
		{[]string{"contxt"}, `unknown verb "contxt" (did you mean context?)`},
		{[]string{"report", "--repoo", "o/r"}, "report: unknown flag --repoo (did you mean --repo?)"},
		{[]string{"doctor", "-admintoken", "x"}, "doctor: unknown flag -admintoken (did you mean --admin-token?)"},
		{[]string{"status", "--formt=json"}, "status: unknown flag --formt (did you mean --format?)"},
		{[]string{"status", "--zzz"}, "status: unknown flag --zzz\n"},
		{[]string{"xyzzy"}, `unknown verb "xyzzy"; the verbs are`},
	} {
		_, stderr, code := runCLI(t, nil, "", c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, "for usage.") {
			t.Errorf("%q: exit %d, %q; want %q and the usage hint", c.args, code, stderr, c.want)
		}
	}
}

// A server written without its scheme is a usage error that says what
// to add, naming where it came from; nothing is asked of it.
func TestServerWithoutScheme(t *testing.T) {
	for _, c := range []struct {
		args []string
		vars map[string]string
		want string
	}{
		{[]string{"history", "--repo", "o/r", "--issue", "1", "--server", "gitea.example.com"}, nil,
			`history: --server "gitea.example.com" has no scheme: write https://gitea.example.com (or http:// for a server without TLS)`},
		{[]string{"context", "--repo", "o/r", "--issue", "1"}, map[string]string{"GITHUB_SERVER_URL": "localhost:3000"},
			`context: GITHUB_SERVER_URL "localhost:3000" has no scheme: write https://localhost:3000`},
		{[]string{"doctor", "--repo", "o/r", "--server", "ftp://gitea.example.com", "--token", "t"}, nil,
			`doctor: --server "ftp://gitea.example.com": the server's URL starts with https:// or http://, not ftp://`},
	} {
		_, stderr, code := runCLIEnv(t, c.vars, c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
}

// runCLIEnv is runCLI with environment variables and no files.
func runCLIEnv(t *testing.T, vars map[string]string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	env := testEnv(vars)
	code = Main(context.Background(), args, env)
	return env.Stdout.(*bytes.Buffer).String(), env.Stderr.(*bytes.Buffer).String(), code
}

// A token (or server) that is a variable's reference nobody expanded —
// ${GITEA_TOKEN}, {env:GITEA_TOKEN}, $GITEA_TOKEN, as an MCP client's
// configuration may pass it on — is named as such by every verb, exit 2,
// before any request: never a 401 that blames the token.
func TestPlaceholderToken(t *testing.T) {
	server := map[string]string{"GITHUB_SERVER_URL": "http://127.0.0.1:1"}
	with := func(k, v string) map[string]string {
		m := maps.Clone(server)
		m[k] = v
		return m
	}
	for _, c := range []struct {
		vars map[string]string
		args []string
		want string
	}{
		{with("GITEA_TOKEN", "${GITEA_TOKEN}"), []string{"context", "--repo", "o/r", "--issue", "1"}, `context: the token from GITEA_TOKEN is "${GITEA_TOKEN}", a placeholder nobody expanded`},
		{with("GITEA_TOKEN", "{env:GITEA_TOKEN}"), []string{"history", "--repo", "o/r", "--issue", "1"}, `history: the token from GITEA_TOKEN is "{env:GITEA_TOKEN}"`},
		{server, slices.Concat(reportArgs, []string{"--token", "$GITEA_TOKEN"}), `report: the token from --token is "$GITEA_TOKEN"`},
		{with("GITHUB_TOKEN", "${GITHUB_TOKEN}"), []string{"status", "--repo", "o/r"}, `status: the token from GITHUB_TOKEN is "${GITHUB_TOKEN}"`},
		{with("GITEA_TOKEN", "${GITEA_TOKEN}"), []string{"recover", "--repo", "o/r", "--issue", "1"}, "recover: the token from GITEA_TOKEN"},
		{with("GITEA_TOKEN", "${GITEA_TOKEN}"), []string{"init", "--repo", "o/r"}, "init: the token from GITEA_TOKEN"},
		{with("GITEA_TOKEN", "${GITEA_TOKEN}"), []string{"doctor", "--repo", "o/r"}, "doctor: the token from GITEA_TOKEN"},
		{with("GNS_GUARD_ADMIN_TOKEN", "${OWNER_TOKEN}"), []string{"doctor", "--repo", "o/r", "--token", "t"}, `doctor: the token from GNS_GUARD_ADMIN_TOKEN is "${OWNER_TOKEN}"`},
		{map[string]string{"GITHUB_SERVER_URL": "${GITHUB_SERVER_URL}", "GITEA_TOKEN": "t"}, []string{"context", "--repo", "o/r", "--issue", "1"}, `context: GITHUB_SERVER_URL is "${GITHUB_SERVER_URL}"`},
		{with("GITEA_TOKEN", "${GITEA_TOKEN}"), []string{"mcp"}, `mcp: the token from GITEA_TOKEN is "${GITEA_TOKEN}"`},
	} {
		_, stderr, code := runCLIEnv(t, c.vars, c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, "set the variable itself") || strings.Contains(stderr, "401") {
			t.Errorf("%q: exit %d, %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
}
