package cli

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/prune"
	"github.com/gns-guard/gns-guard/internal/settings"
	"github.com/gns-guard/gns-guard/internal/testkit/fakeforge"
)

// signedIssue is an issue pruned twice, its archive parts signed with
// partKeys[i] (the key of the i-th prune) and its ledger record with
// ledgerKey; every comment has a URL.
func signedIssue(t *testing.T, ledgerKey []byte, partKeys ...[]byte) *fakeforge.Server {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(pruneGoldenDir, "history-full.md"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 5, 17, 8, 0, 0, 0, time.UTC)
	cfg := prune.DefaultConfig()
	plan := func(body string, key []byte) *prune.Result {
		cfg.Signer = ledger.SecretKeys(key).ArchiveSigner()
		res, err := prune.Plan(body, checkpoint.Parse(body, checkpoint.Options{}), 42, nil, now, cfg)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Prev, cfg.Count = res.Head, res.Count
		return res
	}
	p1 := plan(string(data), partKeys[0])
	body := strings.Replace(p1.Body, "  current_task:", "    - {agent: code-reviewer, action: asked for changes, timestamp: \"2026-05-17T09:00:00Z\"}\n    - {agent: lead-developer, action: addressed review, timestamp: \"2026-05-17T10:00:00Z\"}\n  current_task:", 1)
	p2 := plan(body, partKeys[len(partKeys)-1])
	f := fakeforge.New("org/proj")
	f.AddIssue(issues.Issue{Number: 42, Body: p2.Body, RepoID: 7}, "alice")
	id := int64(1000)
	add := func(author, body string) {
		id++
		f.AddComment(42, issues.Comment{ID: id, Author: author, Body: body, HTMLURL: fmt.Sprintf("http://gitea.test/org/proj/issues/42#issuecomment-%d", id)})
	}
	for i := range 55 {
		add("alice", fmt.Sprintf("comment %d", i))
	}
	add("gitea-actions", p1.Archives[0]) // 1056
	add("bob", "looks fine")
	add("gitea-actions", p2.Archives[0]) // 1058
	l := ledger.Record{Issue: 42, Baseline: true, Archive: p2.Head, Archived: p2.Count, Pending: []string{}, Writer: "gitea-actions"}
	add("gitea-actions", issues.StatusMarker(42)+"\n## ✅ gns-guard: all clear\n"+ledger.Encode(l, ledgerKey)+"\n") // 1059
	return f
}

// configure publishes config as f's repository configuration file ("":
// none).
func configure(f *fakeforge.Server, config string) {
	if config == "" {
		delete(f.Files(""), settings.FileName)
		return
	}
	f.Files("")[settings.FileName] = []byte(config)
}

func kidOf(secret []byte) string { return ledger.SecretKeys(secret).KeyIDs()[0] }

// verifyArgs run history --verify on signedIssue's issue; vars hold no
// secret.
var verifyArgs = []string{"--repo", "org/proj", "--issue", "42", "--server", "http://gitea.test", "--verify"}

var verifyVars = map[string]string{"GITEA_TOKEN": "t"}

// runVerify runs history --verify, first checking that the environment
// holds no secret.
func runVerify(t *testing.T, f *fakeforge.Server, args ...string) (string, string, int) {
	t.Helper()
	for k, v := range verifyVars {
		if strings.Contains(strings.ToUpper(k), "KEY") || v == string(historyKey) {
			t.Fatalf("the environment holds a secret: %s", k)
		}
	}
	return runHistoryCLI(t, f.As(issues.ActionsUser), verifyVars, append(slices.Clone(verifyArgs), args...)...)
}

// verifyJSON is `history --verify --format json`.
type verifyJSON struct {
	Issue    int64    `json:"issue"`
	Verified bool     `json:"verified"`
	Records  int      `json:"records"`
	Parts    int      `json:"parts"`
	KeyIDs   []string `json:"key_ids"`
	Held     []string `json:"public_keys"`
	Entries  int      `json:"entries"`
	Problems []struct {
		Comment int64  `json:"comment"`
		URL     string `json:"url"`
		Message string `json:"message"`
	} `json:"problems"`
	Notes []struct {
		Comment int64  `json:"comment"`
		Message string `json:"message"`
	} `json:"notes"`
}

func decodeVerify(t *testing.T, out string) verifyJSON {
	t.Helper()
	var v verifyJSON
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return v
}

// TestHistoryVerifyPublished: with the public key published in the
// repository's configuration file and no secret anywhere, every signature
// verifies: one line on standard output, exit 0; the JSON says the same.
func TestHistoryVerifyPublished(t *testing.T) {
	f := signedIssue(t, historyKey, historyKey)
	configure(f, "history-tail: 3\nledger-public-key: "+ledger.PublicKey(historyKey)+"\n")
	out, errOut, code := runVerify(t, f)
	want := fmt.Sprintf("issue #42: the history is intact: 1 ledger record and 2 archive parts verified, signed by key %s; ", kidOf(historyKey))
	if code != exitcode.Clean || !strings.HasPrefix(out, want) || strings.Count(out, "\n") != 1 || errOut != "" {
		t.Fatalf("exit %d\nstdout %q\nwant   %q…\nstderr %s", code, out, want, errOut)
	}
	if reads := f.Calls("File"); reads != 1 {
		t.Errorf("the configuration file was read %d times", reads)
	}
	out, errOut, code = runVerify(t, f, "--format", "json")
	v := decodeVerify(t, out)
	if code != exitcode.Clean || !v.Verified || v.Records != 1 || v.Parts != 2 || !slices.Equal(v.KeyIDs, []string{kidOf(historyKey)}) ||
		!slices.Equal(v.Held, []string{kidOf(historyKey)}) || v.Problems == nil || len(v.Problems) != 0 || v.Entries < 5 {
		t.Errorf("exit %d: %+v\n%s", code, v, errOut)
	}
}

// TestHistoryVerifyFlagOverrides: --public-key is checked with instead of
// the file's key, which is then not even read.
func TestHistoryVerifyFlagOverrides(t *testing.T) {
	f := signedIssue(t, historyKey, historyKey)
	configure(f, "ledger-public-key: "+ledger.PublicKey([]byte("some other key"))+"\n")
	if _, errOut, code := runVerify(t, f); code != exitcode.Violation || !strings.Contains(errOut, "which this workflow does not hold") {
		t.Errorf("with the file's (wrong) key: exit %d: %s", code, errOut)
	}
	reads := f.Calls("File")
	if out, errOut, code := runVerify(t, f, "--public-key", ledger.PublicKey(historyKey)); code != exitcode.Clean || !strings.Contains(out, "the history is intact") {
		t.Errorf("with --public-key: exit %d: %s%s", code, out, errOut)
	}
	if f.Calls("File") != reads {
		t.Errorf("the configuration file was read although --public-key was given")
	}
}

// TestHistoryVerifyNoKey: no public key anywhere is a configuration error
// (exit 2) that says how to publish one, in text and in JSON.
func TestHistoryVerifyNoKey(t *testing.T) {
	f := signedIssue(t, historyKey, historyKey)
	configure(f, "history-tail: 3\n")
	_, errOut, code := runVerify(t, f)
	if code != exitcode.Usage || !strings.Contains(errOut, "gns-guard pubkey") || !strings.Contains(errOut, "ledger-public-key") || !strings.Contains(errOut, "--public-key") {
		t.Errorf("exit %d: %s", code, errOut)
	}
	out, _, code := runVerify(t, f, "--format", "json")
	var e exitcode.JSONError
	if err := json.Unmarshal([]byte(out), &e); err != nil || code != exitcode.Usage || e.Error.Kind != "usage" || !strings.Contains(e.Error.Message, "gns-guard pubkey") {
		t.Errorf("JSON: exit %d: %v %s", code, err, out)
	}
	// Flags that make no sense together.
	for _, tt := range []struct {
		args []string
		says string
	}{
		{[]string{"--no-verify"}, "exclude each other"},
		{[]string{"--ledger-key-env", "KEY"}, "needs no secret"},
		{[]string{"--public-key", "ed25519:AAAA"}, "--public-key"},
	} {
		if _, errOut, code := runVerify(t, f, tt.args...); code != exitcode.Usage || !strings.Contains(errOut, tt.says) {
			t.Errorf("%v: exit %d: %s", tt.args, code, errOut)
		}
	}
	if _, errOut, code := runHistoryCLI(t, f.As(issues.ActionsUser), verifyVars, "--repo", "org/proj", "--issue", "42", "--server", "http://x", "--public-key", ledger.PublicKey(historyKey)); code != exitcode.Usage || !strings.Contains(errOut, "add --verify") {
		t.Errorf("--public-key without --verify: exit %d: %s", code, errOut)
	}
}

// TestHistoryVerifyTampered: an archive edited as an agent can (an entry
// dropped, the hash recomputed, the signature kept) fails: exit 1, naming
// the comment by its id and URL; the JSON lists it.
func TestHistoryVerifyTampered(t *testing.T) {
	f := signedIssue(t, historyKey, historyKey)
	pub := ledger.PublicKey(historyKey)
	a, err := prune.ParseArchive(commentBody(t, f, 1056))
	if err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(a.Entries[1])
	body := strings.Replace(commentBody(t, f, 1056), ","+string(js), "", 1)
	f.SetCommentBody(1056, strings.ReplaceAll(body, a.SHA256, prune.Hash(a.Issue, a.Phase, a.Budget, slices.Delete(slices.Clone(a.Entries), 1, 2))))
	if b, err := prune.ParseArchive(commentBody(t, f, 1056)); err != nil || prune.Verify([]*prune.Archive{b}) != nil || b.Sig != a.Sig {
		t.Fatalf("the edit does not read back: %v", err)
	}
	out, errOut, code := runVerify(t, f, "--public-key", pub)
	if code != exitcode.Violation || out != "" || !strings.Contains(errOut, "comment 1056 (http://gitea.test/org/proj/issues/42#issuecomment-1056): archive part 1/1") ||
		!strings.Contains(errOut, "signature does not verify under key "+kidOf(historyKey)) || !strings.Contains(errOut, "verification failed") {
		t.Errorf("exit %d\nstdout %q\nstderr %s", code, out, errOut)
	}
	out, _, code = runVerify(t, f, "--public-key", pub, "--format", "json")
	v := decodeVerify(t, out)
	if code != exitcode.Violation || v.Verified || !slices.ContainsFunc(v.Problems, func(p struct {
		Comment int64  `json:"comment"`
		URL     string `json:"url"`
		Message string `json:"message"`
	}) bool {
		return p.Comment == 1056 && strings.HasSuffix(p.URL, "#issuecomment-1056") && strings.Contains(p.Message, "does not verify")
	}) {
		t.Errorf("JSON: exit %d: %+v", code, v)
	}
	// The ledger record edited: named by its comment too.
	f = signedIssue(t, historyKey, historyKey)
	f.SetCommentBody(1059, strings.Replace(commentBody(t, f, 1059), `"baseline":true`, `"baseline":false`, 1))
	if _, errOut, code := runVerify(t, f, "--public-key", pub); code != exitcode.Violation || !strings.Contains(errOut, "comment 1059 (http://gitea.test/org/proj/issues/42#issuecomment-1059): the ledger record in comment 1059 does not verify") {
		t.Errorf("an edited record: exit %d: %s", code, errOut)
	}
}

// TestHistoryVerifyRotation: after a rotation the first archive is signed
// by the old key, the rest by the new. With only the new public key the
// old part is a key problem, not an edit; with both, all verifies.
func TestHistoryVerifyRotation(t *testing.T) {
	oldKey, newKey := []byte("8e332df098e6cfcd0a6b269d4d426b8eba39538dab391111c65f7d34e6427381"), historyKey
	f := signedIssue(t, newKey, oldKey, newKey)
	_, errOut, code := runVerify(t, f, "--public-key", ledger.PublicKey(newKey))
	if code != exitcode.Violation || !strings.Contains(errOut, "comment 1056 (http://gitea.test/org/proj/issues/42#issuecomment-1056): archive part 1/1 (entries 1–3) is signed by key "+kidOf(oldKey)+", which this workflow does not hold") ||
		!strings.Contains(errOut, "not an edit") || strings.Contains(errOut, "edited") || strings.Contains(errOut, "comment 1058") {
		t.Errorf("only the new key: exit %d: %s", code, errOut)
	}
	out, errOut, code := runVerify(t, f, "--public-key", ledger.PublicKey(newKey), "--public-key", ledger.PublicKey(oldKey), "--format", "json")
	v := decodeVerify(t, out)
	want := []string{kidOf(oldKey), kidOf(newKey)}
	slices.Sort(want)
	if code != exitcode.Clean || !v.Verified || v.Parts != 2 || !slices.Equal(v.KeyIDs, want) {
		t.Errorf("both keys: exit %d: %+v %s", code, v, errOut)
	}
}

// legacyHMAC re-signs an archive comment as parts were signed before
// Ed25519: an HMAC-SHA256 under the secret over the part's canonical JSON
// (written out here, as that format has it), no key id.
func legacyHMAC(t *testing.T, body string, secret []byte) string {
	t.Helper()
	a, err := prune.ParseArchive(body)
	if err != nil {
		t.Fatal(err)
	}
	canonical, err := json.Marshal(struct {
		Format   int            `json:"gns_archive"`
		Issue    int64          `json:"issue"`
		Phase    string         `json:"phase"`
		Part     int            `json:"part"`
		Parts    int            `json:"parts"`
		SHA256   string         `json:"sha256"`
		FirstSeq int            `json:"first_seq"`
		Prev     string         `json:"prev"`
		Count    int            `json:"count"`
		Budget   prune.Snapshot `json:"budget"`
		Entries  []prune.Entry  `json:"entries"`
		Repo     int64          `json:"repo,omitempty"`
	}{a.Format, a.Issue, a.Phase, a.Part, a.Parts, a.SHA256, a.FirstSeq, a.Prev, a.Count, a.Budget, a.Entries, a.Repo})
	if err != nil {
		t.Fatal(err)
	}
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("gns-guard archive v2\n"))
	m.Write(canonical)
	mac := hex.EncodeToString(m.Sum(nil))
	out := strings.Replace(body, `"kid":"`+a.Kid+`","sig":"`+a.Sig+`"`, `"sig":"`+mac+`"`, 1)
	out = strings.Replace(out, " kid="+a.Kid+" sig="+a.Sig+" -->", " sig="+mac+" -->", 1)
	if b, err := prune.ParseArchive(out); err != nil || b.Kid != "" || b.Sig != mac {
		t.Fatalf("the HMAC-signed part does not read back: %v", err)
	}
	return out
}

// TestHistoryVerifyLegacyHMAC: a part signed before Ed25519 (HMAC under
// the secret) verifies under the secret (--ledger-key-env); with only the
// public key the chain from the signed ledger proves it, with a note; a
// wrong secret fails it.
func TestHistoryVerifyLegacyHMAC(t *testing.T) {
	f := signedIssue(t, historyKey, historyKey)
	f.SetCommentBody(1056, legacyHMAC(t, commentBody(t, f, 1056), historyKey))
	out, errOut, code := runVerify(t, f, "--public-key", ledger.PublicKey(historyKey))
	if code != exitcode.Clean || !strings.Contains(out, "1 ledger record and 1 archive part verified, signed by key "+kidOf(historyKey)+"; 1 older archive part with no Ed25519 signature") ||
		!strings.Contains(errOut, "note: comment 1056 (http://gitea.test/org/proj/issues/42#issuecomment-1056): archive part 1/1 (entries 1–3) was signed with the secret ledger-key itself") {
		t.Errorf("the public key: exit %d\n%s%s", code, out, errOut)
	}
	vars := map[string]string{"GITEA_TOKEN": "t", "KEY": string(historyKey), "WRONG": "a5bed7447d48e5a7fd55833807c2ba009fad806e9f023e471168a7c58621e4bb"}
	base := []string{"--repo", "org/proj", "--issue", "42", "--server", "http://x"}
	if _, errOut, code := runHistoryCLI(t, f.As(issues.ActionsUser), vars, append(base, "--ledger-key-env", "KEY")...); code != exitcode.Clean {
		t.Errorf("the secret: exit %d: %s", code, errOut)
	}
	// A wrong secret verifies neither the record nor the part.
	if _, errOut, code := runHistoryCLI(t, f.As(issues.ActionsUser), vars, append(base, "--ledger-key-env", "WRONG")...); code != exitcode.Violation || !strings.Contains(errOut, "comment 1056: archive part 1/1 (entries 1–3): its signature does not verify under the ledger key") {
		t.Errorf("a wrong secret: exit %d: %s", code, errOut)
	}
}
