package ledger

import (
	"slices"
	"time"
)

// AccessStamp is who can write the issue as a run read it
// (docs/ledger.md#who-can-write): the accounts that commented on it, sorted
// into those the server lists as able to write the repository's issues and
// the others (outsiders). Reading the list costs a request; the stamp
// spares it while it is fresh and knows every author.
type AccessStamp struct {
	// Read is in Unix seconds, by the server's clock.
	Read int64 `json:"read"`
	// Writers and Outsiders are sorted, each at most MaxAccessLogins.
	Writers   []string `json:"writers"`
	Outsiders []string `json:"outsiders,omitempty"`
}

// AccessMaxAge: access changed without a comment shows within a day.
const AccessMaxAge = 24 * time.Hour

// MaxAccessLogins bounds each kind of login a stamp keeps.
const MaxAccessLogins = 100

// Fresh says the stamp is at most AccessMaxAge old.
func (s *AccessStamp) Fresh(now time.Time) bool {
	return s != nil && now.Sub(time.Unix(s.Read, 0)) <= AccessMaxAge
}

// Classify: does the stamp know login, and does it write?
func (s *AccessStamp) Classify(login string) (writer, known bool) {
	if s == nil {
		return false, false
	}
	if _, ok := slices.BinarySearch(s.Writers, login); ok {
		return true, true
	}
	_, ok := slices.BinarySearch(s.Outsiders, login)
	return false, ok
}

// NewAccessStamp sorts logins (current authors first, then the old stamp's)
// by the writers read at read.
func NewAccessStamp(read time.Time, writers []string, logins ...string) *AccessStamp {
	st := &AccessStamp{Read: read.Unix(), Writers: []string{}}
	seen := map[string]bool{}
	for _, l := range logins {
		if l == "" || seen[l] {
			continue
		}
		seen[l] = true
		if slices.Contains(writers, l) {
			if len(st.Writers) < MaxAccessLogins {
				st.Writers = append(st.Writers, l)
			}
		} else if len(st.Outsiders) < MaxAccessLogins {
			st.Outsiders = append(st.Outsiders, l)
		}
	}
	slices.Sort(st.Writers)
	slices.Sort(st.Outsiders)
	return st
}

// Logins are every login the stamp knows.
func (s *AccessStamp) Logins() []string {
	if s == nil {
		return nil
	}
	return append(slices.Clone(s.Writers), s.Outsiders...)
}

// Equal holds for two nil stamps.
func (s *AccessStamp) Equal(o *AccessStamp) bool {
	if s == nil || o == nil {
		return s == o
	}
	return s.Read == o.Read && slices.Equal(s.Writers, o.Writers) && slices.Equal(s.Outsiders, o.Outsiders)
}
