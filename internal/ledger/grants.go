package ledger

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"time"
)

// The repository budget (docs/ledger.md#the-repository-budget): the budgets
// granted to governed issues are kept, signed, in one Actions variable,
// GrantsName, which only the owner may write. The runner hands it to the
// step, so judging a new issue costs no request; the guard rewrites it with
// admin-token only when it grants.

// GrantsName is the repository variable that holds the grant list.
const GrantsName = "GNS_GUARD_BUDGET"

// MaxGrantsText is Gitea's VariableDataMaxLength, in characters.
const MaxGrantsText = 65536

// Grant is written [issue, tokens, time (Unix seconds)] so a week fits one
// variable.
type Grant struct {
	Issue  int64
	Tokens int64
	Time   int64
}

// MarshalJSON writes a grant as [issue, tokens, time].
func (g Grant) MarshalJSON() ([]byte, error) {
	return json.Marshal([3]int64{g.Issue, g.Tokens, g.Time})
}

// UnmarshalJSON reads a grant written as [issue, tokens, time].
func (g *Grant) UnmarshalJSON(data []byte) error {
	var a [3]int64
	if err := json.Unmarshal(data, &a); err != nil {
		return err
	}
	*g = Grant{Issue: a[0], Tokens: a[1], Time: a[2]}
	return nil
}

// Grants is the repository's grant list.
type Grants struct {
	// Repo is the repository's id: a key may sign an organisation's.
	Repo   int64   `json:"repo"`
	Grants []Grant `json:"grants"`
}

// GrantState is what a run knows of the grant list.
type GrantState struct {
	// Known: handed over by the runner, or read with admin-token.
	Known bool
	// Text is the variable's value ("" when there is none).
	Text string
}

var grantsText = regexp.MustCompile(`^gns-guard:budget v1 (\{[^\n]*\}) kid=([0-9a-f]{16}|-) sig=([0-9a-f]{128}|unsigned)$`)

func grantsMessage(data []byte) []byte {
	return append([]byte("gns-guard budget v1\n"), data...)
}

// EncodeGrants signs with ledger-key's Ed25519 key when set.
func EncodeGrants(g Grants, secret []byte) string {
	if g.Grants == nil {
		g.Grants = []Grant{}
	}
	data, _ := json.Marshal(g) // plain fields always marshal
	kid, sig := signWith(secret, grantsMessage(data))
	return fmt.Sprintf("gns-guard:budget v1 %s kid=%s sig=%s", data, kid, sig)
}

// ReadGrants reads and verifies the grant list of repository repo (0: not
// known) from its variable's text: none ("") is an empty list. A problem
// says in one sentence why the text is not a list the guard wrote.
func ReadGrants(text string, repo int64, keys Keys) (*Grants, string) {
	if text == "" {
		return &Grants{Repo: repo}, ""
	}
	m := grantsText.FindStringSubmatch(text)
	if m == nil {
		return nil, fmt.Sprintf("the repository variable %s does not hold a grant list the guard wrote: someone with the owner's rights "+
			"changed it", GrantsName)
	}
	if problem := verifyVariable("the grant list", GrantsName, m[2], m[3], grantsMessage([]byte(m[1])), keys); problem != "" {
		return nil, problem
	}
	var g Grants
	if err := json.Unmarshal([]byte(m[1]), &g); err != nil {
		return nil, fmt.Sprintf("the grant list in the repository variable %s cannot be read: someone with the owner's rights changed it", GrantsName)
	}
	if repo != 0 && g.Repo != 0 && g.Repo != repo {
		return nil, fmt.Sprintf("the grant list in the repository variable %s belongs to another repository: someone with the owner's "+
			"rights copied it", GrantsName)
	}
	return &g, ""
}

// Since are the grants at or after since, oldest first.
func Since(gs []Grant, since time.Time) []Grant {
	var out []Grant
	for _, g := range gs {
		if g.Time >= since.Unix() {
			out = append(out, g)
		}
	}
	sortGrants(out)
	return out
}

// Sum adds the grants' tokens, saturating at the largest int64.
func Sum(gs []Grant) int64 {
	var n int64
	for _, g := range gs {
		n = AddTokens(n, g.Tokens)
	}
	return n
}

// AddTokens saturates at the largest int64; counts are never negative.
func AddTokens(a, b int64) int64 {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// Missing are the grants of want that have lacks.
func Missing(want, have []Grant) []Grant {
	var out []Grant
	for _, g := range want {
		if !slices.Contains(have, g) {
			out = append(out, g)
		}
	}
	return out
}

// MergeGrants adds to the list the grants it lacks and drops those made
// before since: a run that grants writes the list it read just before,
// merged, so that a grant another run wrote meanwhile stays.
func MergeGrants(list Grants, add []Grant, since time.Time) Grants {
	all := append(slices.Clone(list.Grants), Missing(add, list.Grants)...)
	return Grants{Repo: list.Repo, Grants: Since(all, since)}
}

func sortGrants(gs []Grant) {
	slices.SortStableFunc(gs, func(a, b Grant) int {
		return cmp.Or(cmp.Compare(a.Time, b.Time), cmp.Compare(a.Issue, b.Issue), cmp.Compare(a.Tokens, b.Tokens))
	})
}
