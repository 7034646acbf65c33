package receipt

import (
	"strings"
	"testing"
)

func TestVerifyStatement(t *testing.T) {
	k, _ := NewKey(secret)
	st := k.SignStatement(Statement{Repo: "acme/app", Issue: 7, Seen: true, Base: 1000, Invocations: []Spent{{Invocation: "run-1", Login: "coder", Calls: 2, Tokens: 1200}}, Issued: 1790000000})
	if err := VerifyStatement(&st, k.Public(), "ACME/app", 7); err != nil {
		t.Fatalf("a statement the meter signed does not verify: %v", err)
	}
	if st.Total() != 1200 || st.Of("run-1") == nil || st.Of("run-2") != nil {
		t.Errorf("total %d, lines %+v", st.Total(), st.Invocations)
	}
	// A receipt's signature over the same figures is no statement's.
	rc := k.Sign(Receipt{Repo: "acme/app", Issue: 7, Invocation: "run-1", Tokens: 1200})
	asStatement := st
	asStatement.Sig = rc.Sig
	for _, tt := range []struct {
		name  string
		st    Statement
		repo  string
		issue int64
		says  string
	}{
		{"base raised", func() Statement { s := st; s.Base = 5000; return s }(), "acme/app", 7, "does not verify"},
		{"a line dropped", func() Statement { s := st; s.Invocations = nil; return s }(), "acme/app", 7, "does not verify"},
		{"a receipt's signature", asStatement, "acme/app", 7, "does not verify"},
		{"another issue", st, "acme/app", 8, "issue #7, not #8"},
		{"another repository", st, "acme/web", 7, "repository acme/app, not acme/web"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := VerifyStatement(&tt.st, k.Public(), tt.repo, tt.issue)
			if err == nil || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("got %v, want %q", err, tt.says)
			}
		})
	}
}
