package ledger

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/gns-guard/gns-guard/internal/prune"
)

// HistoryHash chains accepted entries ("" before the first), so none can
// vanish or change unseen.
func HistoryHash(h string, entries []prune.Entry) string {
	for _, e := range entries {
		sum := sha256.New()
		fmt.Fprintf(sum, "%s\n%q %q %q %q", h, e.Agent, e.Action, e.Invocation, e.Timestamp)
		h = hex.EncodeToString(sum.Sum(nil))
	}
	return h
}
