package guard

import (
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
)

// anchored is trusted(t, 4) with the anchor the guard left after writing
// the status comment: it seals the record in it.
func anchored(t *testing.T) Input {
	t.Helper()
	in := trusted(t, 4)
	l, problem := ledger.Read(in.Status, 9, ledger.ConfigKeys(in.Config))
	if l == nil {
		t.Fatal(problem)
	}
	a := NextAnchor(in, l.Seq, ledger.Line(in.Status.Body), *in.Status, in.Recent, true)
	in.Anchor = ledger.AnchorState{Known: true, Writable: true, Text: ledger.EncodeAnchor(a, in.Config.LedgerKey)}
	return in
}

// withSeq gives the status comment a record of the accepted state with
// sequence number seq.
func withSeq(in *Input, seq int64) {
	l := accepted()
	l.Seq = seq
	in.Recent = in.Recent[:len(in.Recent)-1]
	withLedger(in, l)
}

func TestAnchorHolds(t *testing.T) {
	in := anchored(t)
	p := Decide(in)
	if len(p.Violations) != 0 || !p.RecordTrusted || p.AnchorLags {
		t.Fatalf("the anchored record: %v trusted=%v lags=%v", ruleIDs(p), p.RecordTrusted, p.AnchorLags)
	}
}

func TestAnchorCatchesARollback(t *testing.T) {
	in := anchored(t)
	// The guard wrote record 5 since; an issue writer put back its copy of
	// record 0 (the one in the comment now), well within seconds.
	a, _ := ledger.ReadAnchor(in.Anchor.Text, 0, 9, ledger.ConfigKeys(in.Config))
	a.Seq, a.Record = 5, ledger.RecordHash("a newer record")
	in.Anchor.Text = ledger.EncodeAnchor(*a, in.Config.LedgerKey)
	p := Decide(in)
	msg := tamperMessage(t, p)
	if !strings.Contains(msg, "is record 0, older than record 5") || !strings.Contains(msg, "put back an old copy") {
		t.Errorf("message: %s", msg)
	}
	if p.RecordTrusted || p.Ledger == nil || p.Ledger.Baseline || p.Ledger.Seq < 5 {
		t.Errorf("a rolled-back record is not trusted, and the next one is newer than the anchor: %+v", p.Ledger)
	}
}

func TestAnchorCatchesADeletion(t *testing.T) {
	in := anchored(t)
	in.Status, in.Recent = nil, nil // every comment of the guard deleted
	msg := tamperMessage(t, Decide(in))
	if !strings.Contains(msg, "is gone, although its anchor") || !strings.Contains(msg, "GNS_GUARD_ANCHOR_9") {
		t.Errorf("message: %s", msg)
	}
}

func TestAnchorCatchesAReplacedRecord(t *testing.T) {
	in := anchored(t)
	// The same sequence number, another record: only a holder of the key
	// can sign one, but a record of the same number in another comment of
	// the guard's (say, a copy) is not the sealed one.
	other := accepted()
	other.Consumed = 3500
	other.Remaining = 6500
	in.Recent = in.Recent[:len(in.Recent)-1]
	withLedger(&in, other)
	msg := tamperMessage(t, Decide(in))
	if !strings.Contains(msg, "is not the record 0 its anchor") {
		t.Errorf("message: %s", msg)
	}
}

func TestAnchorLags(t *testing.T) {
	in := anchored(t)
	withSeq(&in, 3) // records 1..3 written, their anchor writes failed
	p := Decide(in)
	if len(p.Violations) != 0 || !p.RecordTrusted || !p.AnchorLags {
		t.Errorf("a record newer than the anchor: %v trusted=%v lags=%v", ruleIDs(p), p.RecordTrusted, p.AnchorLags)
	}
}

func TestAnchorNotTheGuards(t *testing.T) {
	for name, text := range map[string]string{
		"garbage":       "hello",
		"unsigned":      ledger.EncodeAnchor(ledger.Anchor{Issue: 9, Seq: 0}, nil),
		"another key":   ledger.EncodeAnchor(ledger.Anchor{Issue: 9, Seq: 0}, []byte("someone else's key")),
		"another issue": ledger.EncodeAnchor(ledger.Anchor{Issue: 10, Seq: 0}, testKey),
	} {
		t.Run(name, func(t *testing.T) {
			in := anchored(t)
			in.Anchor.Text = text
			msg := tamperMessage(t, Decide(in))
			if !strings.Contains(msg, "GNS_GUARD_ANCHOR_9") {
				t.Errorf("message: %s", msg)
			}
			if name == "another key" && !strings.Contains(msg, "a key problem") {
				t.Errorf("a key the workflow does not hold is a key problem: %s", msg)
			}
		})
	}
}

func TestAnchorRotation(t *testing.T) {
	in := anchored(t)
	// ledger-key rotated: the old key is the previous one now.
	in.Config.LedgerKeyPrevious, in.Config.LedgerKey = in.Config.LedgerKey, []byte("the new ledger key")
	if p := Decide(in); len(p.Violations) != 0 || !p.RecordTrusted {
		t.Errorf("with the previous key the anchor and record verify: %v", ruleIDs(p))
	}
	in.Config.LedgerKeyPrevious = nil
	if msg := tamperMessage(t, Decide(in)); !strings.Contains(msg, "which this workflow does not hold") {
		t.Errorf("without it, a key problem: %s", msg)
	}
}

func TestNextAnchorCoversTheTail(t *testing.T) {
	in := anchored(t)
	old := issues.Comment{ID: 40, Author: "agent", UpdatedAt: written.Add(-time.Hour)}
	status := issues.Comment{ID: 50, Author: issues.ActionsUser, UpdatedAt: written}
	a := NextAnchor(in, 2, "line", status, []issues.Comment{old, status}, true)
	if a.Since > old.UpdatedAt.Unix() || a.Status != 50 || len(a.Tail) != 2 || !a.First {
		t.Errorf("anchor %+v", a)
	}
	text, write := ledger.AnchorWrite(in.Anchor, ledger.ConfigKeys(in.Config), a, in.Config.LedgerKey)
	if !write || !strings.HasPrefix(text, "gns-guard:anchor v1 ") {
		t.Errorf("a changed anchor is written: %q %v", text, write)
	}
	if _, write := ledger.AnchorWrite(ledger.AnchorState{Known: true, Writable: true, Text: text}, ledger.ConfigKeys(in.Config), a, in.Config.LedgerKey); write {
		t.Error("the same anchor is not written again")
	}
	if _, write := ledger.AnchorWrite(ledger.AnchorState{Known: true}, ledger.ConfigKeys(in.Config), a, in.Config.LedgerKey); write {
		t.Error("without admin-token no anchor is written")
	}
}
