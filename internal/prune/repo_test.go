package prune

import (
	"slices"
	"strings"
	"testing"
)

// The repository's id is signed into every part: a part copied from
// another repository's issue (the same ledger key, an organisation's) names
// another id, and history leaves it out.
func TestPartsSignTheRepository(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Signer = testKey
	body := spec{Total: 1000, Consumed: 900, Entries: []Entry{{Agent: "a", Action: "one", Timestamp: "2026-04-04T04:04:04Z"}, {Agent: "b", Action: "two", Timestamp: "2026-04-04T04:05:04Z"}, {Agent: "c", Action: "three", Timestamp: "2026-04-04T04:06:04Z"}, {Agent: "d", Action: "four", Timestamp: "2026-04-04T04:07:04Z"}}}.body(t)
	plan := func(repo int64) *Result {
		cfg.Repo = repo
		res, err := Plan(body, parse(t, body), 0, nil, testNow, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	here, there := plan(7), plan(8)
	if here.Parts[0].Link() == there.Parts[0].Link() || here.Parts[0].Sig == there.Parts[0].Sig {
		t.Fatal("the repository id changes neither the link nor the signature")
	}
	a, err := ParseArchive(there.Archives[0])
	if err != nil || a.Repo != 8 || !a.Verified(testKey) {
		t.Fatalf("read back: repo %v, verified %v, %v", a.Repo, a.Verified(testKey), err)
	}
	_, problems := Rebuild(comments(there.Archives, "bot", 10), "bot", 0, nil, &Chain{Keys: testKey, Repo: 7})
	if !slices.ContainsFunc(problems, func(p Problem) bool { return strings.Contains(p.Message, "names repository 8, not this one (7)") }) {
		t.Errorf("a copy from another repository was read: %v", problems)
	}
}
