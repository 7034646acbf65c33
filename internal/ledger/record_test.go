package ledger

import (
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/issues"
)

// written is when the test records were written (server time).
var written = time.Date(2026, 5, 16, 13, 0, 0, 0, time.UTC)

var testKey = []byte("a ledger key only the guard's workflow can read")

// accepted is a record of a checkpoint the guard accepted at content
// version 4.
func accepted() Record {
	return Record{Issue: 9, Baseline: true, Version: 2, CheckpointIssue: 9, Phase: "build",
		Total: 10000, Consumed: 3000, Remaining: 7000, ContentVersion: 4, Pending: []string{},
		DepthLimit: "2", Written: written.Unix()}
}

func TestLedgerRoundTrip(t *testing.T) {
	l := accepted()
	l.Phase = "build --> <b>x</b>" // agent text can never end the HTML comment
	line := Encode(l, testKey)
	if strings.Count(line, "-->") != 1 || !strings.HasSuffix(line, "-->") {
		t.Fatalf("the record leaks out of its HTML comment: %s", line)
	}
	c := &issues.Comment{ID: 3, Body: "x\n" + line + "\n", UpdatedAt: written.Add(2 * time.Second)}
	got, problem := Read(c, 9, SecretKeys(testKey))
	if problem != "" || got == nil || !got.SameState(l) {
		t.Fatalf("read back %+v, problem %q", got, problem)
	}
	if Line(c.Body) != line {
		t.Errorf("Line: %q", Line(c.Body))
	}
}

func TestLedgerRecordsThatCannotBeTrusted(t *testing.T) {
	line := Encode(accepted(), testKey)
	fresh := written.Add(time.Second)
	cases := []struct {
		name    string
		body    string
		updated time.Time
		key     []byte
		issue   int64
		want    string
	}{
		{"record removed", "## ✅ gns-guard: all clear", fresh, testKey, 9, "carries no ledger record"},
		{"two records", line + "\n" + line, fresh, testKey, 9, "carries 2 ledger records"},
		{"numbers changed", strings.Replace(line, `"consumed":3000`, `"consumed":1000`, 1), fresh, testKey, 9, "does not verify"},
		{"unsigned under a key", Encode(accepted(), nil), fresh, testKey, 9, "not signed"},
		{"another issue's record", line, fresh, testKey, 10, "belongs to issue #9, not #10"},
		{"another writer's comment", Encode(func() Record { l := accepted(); l.Writer = "gns-bot"; return l }(), testKey), fresh, testKey, 9, `names "gns-bot" as its writer, but "mallory" posted it`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l, problem := Read(&issues.Comment{ID: 7, Author: "mallory", Body: c.body, UpdatedAt: c.updated}, c.issue, SecretKeys(c.key))
			if l != nil || !strings.Contains(problem, c.want) {
				t.Errorf("ledger %+v, problem %q, want %q", l, problem, c.want)
			}
		})
	}
	// Without a key the record is trusted by its author: the weaker mode.
	if l, problem := Read(&issues.Comment{Body: Encode(accepted(), nil), UpdatedAt: fresh}, 9, SecretKeys(nil)); l == nil || problem != "" {
		t.Errorf("unsigned record without a key: %v %q", l, problem)
	}
}

// TestStandInSignsOnlyForAPublicKey: a stand-in (what `report` draws to
// predict the guard's runs) signs, and verifies what it signed, only where
// the published public key verifies and ledger-key is not held. The guard's
// record still verifies; with ledger-key held, or with no key at all, the
// stand-in changes nothing; it verifies no first-format (HMAC) part.
func TestStandInSignsOnlyForAPublicKey(t *testing.T) {
	standIn := []byte("a key drawn for one prediction of the guard's runs")
	c := func(body string) *issues.Comment {
		return &issues.Comment{ID: 7, Body: "x\n" + body + "\n", UpdatedAt: written.Add(time.Second)}
	}
	published := config.Default()
	published.LedgerPublicKey = PublicKey(testKey)
	published.LedgerStandIn = standIn
	k := ConfigKeys(published)
	if !k.Signs() || k.SigningKeyID() == SecretKeys(testKey).SigningKeyID() {
		t.Fatalf("the stand-in does not sign in place of ledger-key: signs %v, key %q", k.Signs(), k.SigningKeyID())
	}
	for name, line := range map[string]string{"the guard's record": Encode(accepted(), testKey), "the prediction's record": k.Encode(accepted())} {
		if l, problem := Read(c(line), 9, k); l == nil || problem != "" {
			t.Errorf("%s does not verify under the public key and the stand-in: %q", name, problem)
		}
	}
	if _, problem := Read(c(k.Encode(accepted())), 9, ConfigKeys(func() config.Config { p := published; p.LedgerStandIn = nil; return p }())); !strings.Contains(problem, "signed with key") {
		t.Errorf("a record the stand-in signed verifies without it: %q", problem)
	}
	if mac, held := k.ArchiveVerifier().VerifyMAC([]byte("m"), []byte("x")); mac || held {
		t.Errorf("the stand-in checks first-format parts: valid %v, held %v", mac, held)
	}

	held := published
	held.LedgerKey = testKey
	if ConfigKeys(held).SigningKeyID() != SecretKeys(testKey).SigningKeyID() {
		t.Errorf("with ledger-key held the stand-in signs")
	}
	none := config.Default()
	none.LedgerStandIn = standIn
	if k := ConfigKeys(none); k.Any() || k.Signs() {
		t.Errorf("without a key the stand-in makes records signed: %v %v", k.Any(), k.Signs())
	}
}
