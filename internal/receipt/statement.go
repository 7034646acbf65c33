package receipt

import (
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Statement is an issue's metered spend as the meter signs it for the
// guard: every invocation that called through it, and the issue's base.
// The guard asks for it at meter-url itself; an agent never hands it one
// (docs/meter.md#the-issues-metered-total).
type Statement struct {
	// Repo is OWNER/NAME as Gitea names it.
	Repo  string `json:"repo"`
	Issue int64  `json:"issue"`
	// Seen: read before a call, so Base holds.
	Seen bool `json:"seen"`
	// Base is budget.consumed when the meter first read the issue, less
	// what the invocations its checkpoint recorded then had spent: the
	// rise of consumed since is at least what the recorded invocations
	// spent.
	Base int64 `json:"base"`
	// Invocations are in order of first call.
	Invocations []Spent `json:"invocations"`
	// Issued is when the meter signed it, in Unix seconds.
	Issued int64  `json:"issued"`
	KeyID  string `json:"kid,omitempty"`
	Sig    string `json:"sig,omitempty"`
}

// Spent is one invocation's line of a statement.
type Spent struct {
	Invocation string `json:"invocation"`
	Login      string `json:"login"`
	Agent      string `json:"agent,omitempty"`
	Calls      int64  `json:"calls"`
	// Tokens counts calls in flight at their worst.
	Tokens int64 `json:"tokens"`
	// InFlight counts its calls not settled yet.
	InFlight int64 `json:"in_flight,omitempty"`
	// First and Last are call starts, in Unix seconds.
	First int64 `json:"first"`
	Last  int64 `json:"last"`
}

// Total is what the statement's invocations spent.
func (s *Statement) Total() int64 {
	var n int64
	for _, l := range s.Invocations {
		n += l.Tokens
	}
	return n
}

// Of is nil when inv never called.
func (s *Statement) Of(inv string) *Spent {
	for i := range s.Invocations {
		if s.Invocations[i].Invocation == inv {
			return &s.Invocations[i]
		}
	}
	return nil
}

// statementDomain keeps receipt and statement signatures apart.
const statementDomain = "gns-guard meter statement v1\n"

func (s Statement) message() []byte {
	s.Sig = ""
	data, _ := json.Marshal(s) // plain fields: never fails
	return append([]byte(statementDomain), data...)
}

// SignStatement returns s signed.
func (k Key) SignStatement(s Statement) Statement {
	s.KeyID = k.id
	s.Sig = hex.EncodeToString(ed25519.Sign(k.priv, s.message()))
	return s
}

// VerifyStatement's error says what is wrong, for a finding.
func VerifyStatement(s *Statement, publicKey, repo string, issue int64) error {
	if s == nil {
		return errors.New("there is no statement")
	}
	if err := verifySigned(publicKey, "the meter's statement", s.KeyID, s.Sig, s.message(),
		"meter-url does not point at the meter that holds meter-key, or the answer was changed"); err != nil {
		return err
	}
	switch {
	case !strings.EqualFold(s.Repo, repo):
		return fmt.Errorf("the meter's statement is for repository %s, not %s", s.Repo, repo)
	case s.Issue != issue:
		return fmt.Errorf("the meter's statement is for issue #%d, not #%d", s.Issue, issue)
	}
	for _, l := range s.Invocations {
		if l.Tokens < 0 || l.Calls < 0 {
			return fmt.Errorf("the meter's statement has negative figures for invocation %q", l.Invocation)
		}
	}
	return nil
}
