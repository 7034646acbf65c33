package action_test

import (
	"net"
	"strings"
	"testing"

	"github.com/gns-guard/gns-guard/internal/forge"
	"github.com/gns-guard/gns-guard/internal/port"
)

// A malformed input is a configuration error: exit 2, naming the input,
// before anything is read or written.
func TestMalformedInputExits2(t *testing.T) {
	f := newFakeFixture(t)
	n, d := f.Open(t, "too deep", example(t, "depth-exceeded.md"), "cascade::depth-2", "size::medium")
	for _, c := range []struct{ input, value string }{
		{"prune-threshold", "abc"},
		{"fail-on", "sometimes"},
		{"dry-run", "maybe"},
		{"default-max-depth", "-1"},
		{"encoding", "p50k_base"},
		{"history-tail", "0"},
	} {
		r := f.Run(t, d, c.input, c.value)
		out := r.Stdout + r.Stderr
		if r.Code != 2 || !strings.Contains(out, "input "+c.input) || !strings.Contains(out, `"`+c.value+`"`) {
			t.Errorf("%s: %q: exit %d, expected 2 with a message naming the input and the value\n%s", c.input, c.value, r.Code, r.String())
		}
		if r.Outputs["result"] != "error" {
			t.Errorf("%s: result %q, expected error", c.input, r.Outputs["result"])
		}
	}
	if st := f.Issue(t, n); st.Comments != 0 || st.Has("cascade::depth-exceeded") {
		t.Errorf("a configuration error wrote to the issue: %+v", st)
	}
}

// An API that cannot be reached: exit 3, saying which server. The step
// connects as the binary does, to an address where nothing listens.
func TestUnreachableServerExits3(t *testing.T) {
	f := newFakeFixture(t)
	_, d := f.Open(t, "healthy", example(t, "healthy.md"), "cascade::depth-2", "size::medium")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close()
	st := f.Step()
	st.Env["GITHUB_API_URL"] = closed + "/api/v1"
	st.Forge = func(apiURL, token, owner, repo string) (port.Forge, error) {
		return forge.New(apiURL, token, owner, repo)
	}
	r := st.Run(t, d)
	out := r.Stdout + r.Stderr
	if r.Code != 3 || !strings.Contains(out, "could not reach "+closed) || r.Outputs["result"] != "error" {
		t.Errorf("exit %d, expected 3 saying it could not reach %s\n%s", r.Code, closed, r.String())
	}
}

// A token the server rejects: exit 3, saying the token was rejected.
func TestRejectedTokenExits3(t *testing.T) {
	f := newFixture(t)
	_, d := f.Open(t, "healthy", example(t, "healthy.md"), "cascade::depth-2", "size::medium")
	st := f.Step()
	st.Token = strings.Repeat("0", 40)
	r := st.Run(t, d)
	out := r.Stdout + r.Stderr
	if r.Code != 3 || !strings.Contains(out, "token") || !strings.Contains(out, "401") || r.Outputs["result"] != "error" {
		t.Errorf("exit %d, expected 3 saying the token was rejected\n%s", r.Code, r.String())
	}
	// The token appears only in the command that masks it in the log.
	if strings.Contains(strings.ReplaceAll(out, "::add-mask::"+st.Token+"\n", ""), st.Token) {
		t.Errorf("the token was printed:\n%s", out)
	}
}

// A ledger-key under 256 bits is refused: its public key is published, so
// a short secret can be guessed offline and every record forged. Exit 2,
// naming the minimum and gns-guard keygen, never the key; nothing is
// written. A weak ledger-key-previous still verifies (a rotation away from
// it must finish), with a warning.
func TestWeakLedgerKeyExits2(t *testing.T) {
	f := newFakeFixture(t)
	n, d := f.Open(t, "healthy", example(t, "healthy.md"), "cascade::depth-2", "size::medium")
	for _, weak := range []string{"abc", "s3cret-but-not-long-enough", strings.Repeat("ab", 31)} {
		r := f.Run(t, d, "ledger-key", weak)
		out := unmasked(r.Stdout + r.Stderr)
		if r.Code != 2 || r.Outputs["result"] != "error" || !strings.Contains(out, "input ledger-key") ||
			!strings.Contains(out, "256 bits") || !strings.Contains(out, "gns-guard keygen") || strings.Contains(out, weak) {
			t.Errorf("ledger-key of %d characters: exit %d, expected 2 naming the input, the minimum and keygen, not the key\n%s", len(weak), r.Code, r.String())
		}
	}
	if st := f.Issue(t, n); st.Comments != 0 {
		t.Errorf("a refused key wrote to the issue: %+v", st)
	}
	// Not hex: the log's random stop-commands token may hold "abc".
	const previous = "old-and-weak"
	r := f.Run(t, d, "ledger-key", ledgerKey, "ledger-key-previous", previous)
	r.Expect(t, 0, "pass")
	if out := unmasked(r.Stdout + r.Stderr); !strings.Contains(out, "ledger-key-previous is weaker than 256 bits") || strings.Contains(out, previous) {
		t.Errorf("a weak ledger-key-previous must pass with a warning that does not show it\n%s", r.String())
	}
}

// unmasked is a log without its ::add-mask:: lines, which hand the runner
// the secrets to hide.
func unmasked(log string) string {
	var keep []string
	for _, l := range strings.Split(log, "\n") {
		if !strings.HasPrefix(l, "::add-mask::") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}
