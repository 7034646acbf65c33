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
	// Commit is the default branch's commit the run was started for
	// (GITHUB_SHA); "" when the runner did not say, or when the read
	// failed and the next run must try again.
	Commit string `json:"commit"`
	// Broken are failed or unmade checks, in the judge's order, texts
	// bounded.
	Broken []posture.Check `json:"broken"`
	// Judged is in Unix seconds, server clock; past PostureMaxAge it is
	// redone.
	Judged int64 `json:"judged,omitempty"`
	// Known are the accounts the judgement knew (the owner, collaborators,
	// team members, site admins), and those checked since, sorted: an
	// account acting on the issue that it does not know is checked.
	Known []string `json:"known,omitempty"`
}

// PostureMaxAge bounds the age of a posture stamp: access given without a
// commit (a collaborator added) is seen within a day at most, and at once
// when the account acts on the issue (docs/ledger.md#the-posture).
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

// The bounds of a stamp's checks: the record lives in a comment.
const (
	// MaxPostureWhy is in runes.
	MaxPostureWhy = 600
	// MaxPostureLogins bounds one check's logins.
	MaxPostureLogins = 50
)

// NewPostureStamp is the stamp of checks judged at commit: those that did
// not hold, each cut to the bounds (a cut Why ends with "…").
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
