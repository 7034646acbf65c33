package ledger

import (
	"slices"
	"time"

	"github.com/gns-guard/gns-guard/internal/posture"
)

// PostureStamp is the posture as a run judged it
// (docs/ledger.md#the-posture): the default branch's commit and the checks
// that did not hold. Workflow, protection and settings change only with a
// commit, so a run for the same commit reads nothing; access given between
// commits shows at the next.
type PostureStamp struct {
	// Commit is GITHUB_SHA; "" when unknown, or when a failed read must be
	// retried.
	Commit string `json:"commit"`
	// Broken are failed or unmade checks, judge's order, bounded.
	Broken []posture.Check `json:"broken"`
	// Judged is Unix seconds, server clock; redone past PostureMaxAge.
	Judged int64 `json:"judged,omitempty"`
	// Known accounts, sorted; an unknown one acting on the issue is checked.
	Known []string `json:"known,omitempty"`
}

// PostureMaxAge: access given without a commit shows within a day, at once
// if the account acts (docs/ledger.md#the-posture).
const PostureMaxAge = 24 * time.Hour

// MaxPostureKnown caps known accounts; others are checked when they act.
const MaxPostureKnown = 200

// Fresh says the stamp judged commit within PostureMaxAge.
func (s *PostureStamp) Fresh(commit string, now time.Time) bool {
	return s != nil && s.Commit == commit && s.Judged > 0 && now.Sub(time.Unix(s.Judged, 0)) <= PostureMaxAge
}

// Knows says the stamp knows login.
func (s *PostureStamp) Knows(login string) bool {
	_, ok := slices.BinarySearch(s.Known, login)
	return ok
}

// Learn adds logins to the accounts the stamp knows, bounded.
func (s *PostureStamp) Learn(logins ...string) {
	for _, l := range logins {
		if i, ok := slices.BinarySearch(s.Known, l); !ok && l != "" && len(s.Known) < MaxPostureKnown {
			s.Known = slices.Insert(s.Known, i, l)
		}
	}
}

// Stamp bounds: the record lives in a comment.
const (
	// MaxPostureWhy is in runes.
	MaxPostureWhy = 600
	// MaxPostureLogins bounds one check's logins.
	MaxPostureLogins = 50
)

// NewPostureStamp keeps failed checks, cut to bounds (a cut Why ends "…").
func NewPostureStamp(commit string, checks []posture.Check) *PostureStamp {
	st := &PostureStamp{Commit: commit, Broken: []posture.Check{}}
	for _, c := range checks {
		if c.Holds {
			continue
		}
		if r := []rune(c.Why); len(r) > MaxPostureWhy {
			c.Why = string(r[:MaxPostureWhy-1]) + "…"
		}
		c.Logins = slices.Clone(c.Logins[:min(len(c.Logins), MaxPostureLogins)])
		if c.Logins == nil {
			c.Logins = []string{}
		}
		st.Broken = append(st.Broken, c)
	}
	return st
}

// Equal holds for two nil stamps.
func (s *PostureStamp) Equal(o *PostureStamp) bool {
	if s == nil || o == nil {
		return s == o
	}
	return s.Commit == o.Commit && s.Judged == o.Judged && slices.Equal(s.Known, o.Known) && slices.EqualFunc(s.Broken, o.Broken,
		func(a, b posture.Check) bool {
			return a.ID == b.ID && a.Holds == b.Holds && a.Why == b.Why && slices.Equal(a.Logins, b.Logins)
		})
}
