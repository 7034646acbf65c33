package settings

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/markdown"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

// FileName is read from the default branch.
const FileName = ".gitea/gns-guard.yml"

// Kind is the type of a setting's value.
type Kind int

// The kinds of setting.
const (
	// Bool also takes yes/no, on/off and 1/0, in any case.
	Bool Kind = iota + 1
	// Int is a whole number with a least value.
	Int
	// Float is a number in a range.
	Float
	// List is a list of names: a YAML list in the file, or a comma- or
	// newline-separated text anywhere; blanks are trimmed and empty items
	// dropped.
	List
	// Map maps names to logins: NAME: LOGIN or [LOGIN, ...], or NAME=LOGIN
	// items.
	Map
	// String is a text taken as it is, trimmed.
	String
	// Enum is one of a few words.
	Enum
	// MaxDepth is a whole number >= 0, n (unlimited), or nothing.
	MaxDepth
	// Secret is a token or key: an input of the action only, never a key of
	// the file, never a flag, never printed.
	Secret
)

// String words the kind as the reference does.
func (k Kind) String() string {
	switch k {
	case Bool:
		return "boolean"
	case Int:
		return "whole number"
	case Float:
		return "number"
	case List:
		return "list"
	case Map:
		return "mapping"
	case String:
		return "text"
	case Enum:
		return "choice"
	case MaxDepth:
		return "depth"
	case Secret:
		return "secret"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Setting is one row of the table.
type Setting struct {
	// Name is kebab-case ("prune-threshold"), shared by key and flag.
	Name string
	// Kind is the type of the value.
	Kind Kind
	// Default is text; "" means none (empty list, no limit, no cap).
	Default string
	// ActionDefault is the default action.yml gives the input, for an
	// input no file may set: token's ${{ github.token }}, which only a
	// runner evaluates. Every input a file may set has none (a runner
	// hands the step action.yml's defaults as inputs, which would override
	// the file).
	ActionDefault string
	// Range follows "expected " in errors: "a number above 0 up to 1".
	Range string
	// Choices are an Enum's words, in Range's order; nil otherwise.
	Choices []string
	// Description says what the setting does, in one line.
	Description string
	// Input: the setting is an input of action.yml.
	Input bool
	// File allows .gitea/gns-guard.yml (never a secret or token).
	File bool
	// Flag makes it a flag of the judging verbs (never a secret).
	Flag bool
}

// ShownDefault is Default, or "empty".
func (s Setting) ShownDefault() string {
	if s.Default == "" {
		return "empty"
	}
	return s.Default
}

// row is a Setting and how its value applies.
type row struct {
	Setting
	// set applies a value that is not a YAML list unless the Kind is List;
	// it reports false, and leaves r as it was, when v is not accepted.
	set func(r *Resolved, v Value) bool
	// why replaces "expected Range, got v"; a secret's value is never shown.
	why func(v Value) string
}

// actionDefault sets ActionDefault.
func (r row) actionDefault(d string) row {
	r.ActionDefault = d
	return r
}

// choices sets Choices and Range: "a, b or c".
func (r row) choices(values ...string) row {
	r.Choices = values
	r.Range = strings.Join(values[:len(values)-1], ", ") + " or " + values[len(values)-1]
	return r
}

// where says which sources may give a setting.
type where uint8

const (
	inInput where = 1 << iota
	inFile
	inFlag
)

func newRow(name string, k Kind, def, rng string, w where, desc string, set func(*Resolved, Value) bool) row {
	return row{Setting{
		Name: name, Kind: k, Default: def, Range: rng, Description: desc,
		Input: w&inInput != 0, File: w&inFile != 0, Flag: w&inFlag != 0,
	}, set, nil}
}

// rows is the table, in the order of action.yml.
var rows = []row{
	newRow("token", Secret, "", "a token", inInput,
		"Token for the Gitea API: comment, create labels, edit issue bodies. The Actions token works; with a personal token, events its "+
			"own user causes are skipped (no loops). A secret: never put it in .gitea/gns-guard.yml.",
		func(r *Resolved, v Value) bool { r.Token = strings.TrimSpace(v.Text); return true }).
		actionDefault("${{ github.token }}"),
	newRow("admin-token", Secret, "", "a token", inInput,
		"Token of the repository's owner (or a repository admin), e.g. ${{ secrets.GNS_GUARD_ADMIN_TOKEN }}. The guard uses it to write "+
			"each issue's anchor (the Actions variable GNS_GUARD_ANCHOR_<number>, which only the owner can write: it catches a rolled-back "+
			"or deleted ledger), to lock issues (the Actions token cannot lock) and to ask the server whether a user is a repository "+
			"admin, which recognizes approvals when budget-admins is empty. Without it a refused lock, anchor write or admin check is "+
			"reported in the status comment, never a crash. A secret: never put it in .gitea/gns-guard.yml.",
		func(r *Resolved, v Value) bool { r.AdminToken = strings.TrimSpace(v.Text); return true }),
	enumRow("fail-on", "violation", inInput|inFile|inFlag, []string{"violation", "never"},
		func(c *config.Config) *string { return &c.FailOn },
		"When the job fails: violation (on any violation) or never."),
	parsedRow("dry-run", Bool, "false", "true or false (also yes/no, on/off, 1/0)", inInput|inFile,
		parseBool, func(c *config.Config) *bool { return &c.DryRun },
		"true: compute and print every write the guard would make, and make none."),
	floatRow("prune-threshold", "0.8", inInput|inFile|inFlag, 0, false, 1,
		func(c *config.Config) *float64 { return &c.PruneThreshold },
		"Prune when budget.consumed > prune-threshold * budget.total."),
	floatRow("carryover-ratio", "0.5", inInput|inFile|inFlag, 0, true, 1,
		func(c *config.Config) *float64 { return &c.CarryoverRatio },
		"A pruned phase starts with floor(remaining * carryover-ratio) + phase-grant tokens."),
	intRow("phase-grant", "0", inInput|inFile|inFlag, 0, "",
		func(c *config.Config) *int64 { return &c.PhaseGrant },
		"Tokens added to the carried-over budget of a new phase."),
	intRow("history-tail", "3", inInput|inFile|inFlag, 1, "",
		func(c *config.Config) *int { return &c.HistoryTail },
		"Entries history_tail keeps when pruned; older ones go to archive comments. The tail may grow to twice this before the guard archives."),
	newRow("default-max-depth", MaxDepth, "", "a whole number >= 0, n (unlimited), or nothing", inInput|inFile|inFlag,
		"Depth limit for a governed issue with no cascade::depth-N label: a whole number, n (unlimited), or empty (the missing label is a violation).",
		func(r *Resolved, v Value) bool {
			d, err := config.ParseMaxDepth(strings.TrimSpace(v.Text))
			if err != nil {
				return false
			}
			r.Config.DefaultMaxDepth = d
			return true
		}),
	listRow("allowed-agents", "", inInput|inFile|inFlag,
		func(c *config.Config) *[]string { return &c.AllowedAgents },
		"Agents allowed to act, comma- or newline-separated. Empty: any agent."),
	listRow("budget-admins", "", inInput|inFile|inFlag,
		func(c *config.Config) *[]string { return &c.BudgetAdmins },
		"Users who may approve, comma- or newline-separated: raise a budget or change the version in the issue body, remove "+
			"budget::exhausted or permission::violation, add a relaxing label. Empty: repository admins (recognizing them may need admin-token)."),
	keyRow("ledger-key", true, func(c *config.Config) *[]byte { return &c.LedgerKey },
		"Secret that signs the guard's ledger, e.g. ${{ secrets.GNS_GUARD_LEDGER_KEY }}: "+ledger.KeyRule+" (a weaker one is refused). "+
			"Without it the ledger is trusted by author only, and an issue writer who edits the guard's comment can forge it. Never "+
			"printed; never put it in .gitea/gns-guard.yml."),
	keyRow("ledger-key-previous", false, func(c *config.Config) *[]byte { return &c.LedgerKeyPrevious },
		"The ledger-key before a rotation, e.g. ${{ secrets.GNS_GUARD_LEDGER_KEY_PREVIOUS }}: records it signed still verify and are "+
			"signed anew with ledger-key. A key weaker than 256 bits is still accepted here, with a warning, so that a rotation away from "+
			"it can finish. Never printed; never put it in .gitea/gns-guard.yml."),
	intRow("max-budget", "", inInput|inFile|inFlag, 1, "no cap",
		func(c *config.Config) *int64 { return &c.MaxBudget },
		"Largest budget.total a new issue may start with before an approver accepts it. Empty: no cap."),
	intRow("repository-budget", "", inInput|inFile|inFlag, 1, "no cap",
		func(c *config.Config) *int64 { return &c.RepositoryBudget },
		"Tokens the governed issues of the repository may be granted within repository-budget-window (the budgets new issues start with "+
			"and the raises approvers accept): a new issue whose budget would take the window over it waits for an approver "+
			"(budget::exhausted). The grants are kept in the repository variable GNS_GUARD_BUDGET, written with admin-token (the owner's): "+
			"without it the cap cannot be kept. Empty: no cap."),
	parsedRow("repository-budget-window", String, "7d", "a duration such as 7d, 36h or 90m", inInput|inFile|inFlag,
		parseDuration, func(c *config.Config) *time.Duration { return &c.RepositoryBudgetWindow },
		"How far back repository-budget counts the grants."),
	listRow("protected-paths", ".kilo/, .gitea/workflows/, .gitea/gns-guard.yml", inInput|inFile|inFlag,
		func(c *config.Config) *[]string { return &c.ProtectedPaths },
		"Path prefixes a pull request may change only with the permission::evolve-system label, comma- or newline-separated: by default "+
			"the agents' configuration and the guard's own workflows and settings. An empty list in .gitea/gns-guard.yml (protected-paths: "+
			"[]) protects none."),
	floatRow("pressure-threshold", "0.6", inInput|inFile|inFlag, 0, false, math.Inf(1),
		func(c *config.Config) *float64 { return &c.PressureThreshold },
		"Fail when the next agent's entry context / the task size's max context exceeds this."),
	newRow("encoding", Enum, string(tokens.CL100kBase), "", inInput|inFile|inFlag,
		"Tokenizer encoding for token counts: cl100k_base or o200k_base.",
		func(r *Resolved, v Value) bool {
			enc, err := tokens.ParseEncoding(v.Text)
			if err != nil {
				return false
			}
			r.Config.Encoding = enc
			return true
		}).
		choices(string(tokens.CL100kBase), string(tokens.O200kBase)),
	intRow("max-checkpoint-bytes", "65536", inInput|inFile|inFlag, 1, "",
		func(c *config.Config) *int { return &c.MaxCheckpointBytes },
		"A checkpoint block larger than this is a finding and is not parsed."),
	intRow("digest-after", "5", inInput|inFile|inFlag, 0, "",
		func(c *config.Config) *int { return &c.DigestAfter },
		"Post a completion digest after this many agent results (0: never)."),
	newRow("metrics-file", String, "", "a file path, or nothing", inInput|inFile,
		"Append one context-budget JSON line per run to this file. Empty: the metrics output only.",
		func(r *Resolved, v Value) bool { r.Config.MetricsFile = strings.TrimSpace(v.Text); return true }),
	enumRow("under-report", "warn", inInput|inFile|inFlag, []string{"warn", "fail", "off"},
		func(c *config.Config) *string { return &c.UnderReport },
		"What an agent's result comment holding more tokens than the rise of consumed its report brought is: warn (a warning), fail (a violation) or off."),
	parsedRow("stale-after", String, "7d", "a duration such as 7d, 36h or 90m", inInput|inFile|inFlag,
		parseDuration, func(c *config.Config) *time.Duration { return &c.StaleAfter },
		"gns-guard status marks an issue stale after this long without accepted progress."),
	parsedRow("unjudged-grace", String, "2m", "a duration such as 2m, 90s or 1h", inInput|inFile|inFlag,
		parseDuration, func(c *config.Config) *time.Duration { return &c.UnjudgedGrace },
		"How long an issue's body may be ahead of the guard's ledger (a change no guard run has judged yet) before gns-guard context "+
			"and report refuse to build on it and gns-guard status lists it: a guard switched off cannot go unnoticed."),
	newRow("mode", Enum, "issue", "", inInput,
		"issue: guard the event's issue. dashboard: keep the repository's dashboard issue (for schedule and workflow_dispatch runs).",
		func(r *Resolved, v Value) bool {
			switch m := strings.ToLower(strings.TrimSpace(v.Text)); m {
			case "issue", "dashboard":
				r.Mode = m
				return true
			case "":
				r.Mode = "issue"
				return true
			}
			return false
		}).
		choices("issue", "dashboard"),
	newRow("issue-number", Int, "", "a whole number >= 1, or nothing", inInput,
		"The issue or pull request to guard, for a run no issue event started (workflow_dispatch, schedule). Empty: the event's own.",
		func(r *Resolved, v Value) bool {
			t := strings.TrimSpace(v.Text)
			if t == "" {
				r.IssueNumber = 0
				return true
			}
			n, err := strconv.ParseInt(t, 10, 64)
			if err != nil || n < 1 {
				return false
			}
			r.IssueNumber = n
			return true
		}),
	newRow("ledger-public-key", String, "", "ed25519: and 44 characters of base64, as gns-guard pubkey prints it", inFile,
		"The public key of ledger-key, exactly as gns-guard pubkey prints it: anyone verifies the guard's signed history with it "+
			"(gns-guard history --verify), holding no secret.",
		func(r *Resolved, v Value) bool {
			k := strings.TrimSpace(v.Text)
			if k != "" {
				if _, err := ledger.ParsePublicKey(k); err != nil {
					return false
				}
			}
			r.LedgerPublicKey, r.Config.LedgerPublicKey = k, k
			return true
		}),
	newRow("agents", Map, "", "a mapping of agent names to Gitea logins (NAME: LOGIN, or NAME: [LOGIN, ...]), or items NAME=LOGIN", inFile,
		"Which Gitea logins may speak as each agent: a result comment counts as an agent's result (for the entry load, the digest, "+
			"recover and the rules) only when one of the agent's logins posted it, and a writer posting as an agent not mapped to it fails "+
			"agent-impersonated. gns-guard init --agents NAME=LOGIN writes it. Empty: any account that can write the issue may speak as any agent.",
		func(r *Resolved, v Value) bool {
			m, err := ParseAgents(listOf(v))
			if err == nil {
				r.Config.Agents = m
			}
			return err == nil
		}),
	enumRow("load-comments-from", "writers", inInput|inFile|inFlag, []string{"writers", "everyone"},
		func(c *config.Config) *string { return &c.LoadCommentsFrom },
		"Whose comments the next agent's entry load holds: writers (the accounts that can write the issue; an outsider's comment is "+
			"left out and named) or everyone. Either way an outsider's comment is outside the judged conversation: oversized or malformed, it is a warning."),
	enumRow("metering", "off", inInput|inFile|inFlag, []string{"off", "required"},
		func(c *config.Config) *string { return &c.Metering },
		"required: an agent result without a valid receipt of gns-guard meter for its invocation is a violation "+
			"(consumption-unmetered). off: a receipt is judged when there is one."),
	newRow("meter-public-key", String, "", "ed25519: and 44 characters of base64, as gns-guard meter --public-key prints it", inFile,
		"The public key of the meter's meter-key, exactly as gns-guard meter --public-key prints it: the guard verifies the receipts in "+
			"result comments with it. Empty: receipts are not judged.",
		func(r *Resolved, v Value) bool {
			k := strings.TrimSpace(v.Text)
			if k != "" {
				if _, err := ledger.ParsePublicKey(k); err != nil {
					return false
				}
			}
			r.Config.MeterPublicKey = k
			return true
		}),
	newRow("meter-url", String, "", "an http or https URL, or nothing", inFile|inFlag,
		"The meter's base URL (gns-guard meter): gns-guard report fetches its invocation's signed receipt there and puts it in the "+
			"result's footer. Empty: no meter.",
		func(r *Resolved, v Value) bool {
			u := strings.TrimRight(strings.TrimSpace(v.Text), "/")
			if u != "" && !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
				return false
			}
			r.Config.MeterURL = u
			return true
		}),
	newRow("gate-account", String, "", "a Gitea login, or nothing", inFile,
		"The gated posture: the login of the account gns-guard meter --gate-token-env writes agents' results, labels and sub-issues as, "+
			"after judging each. Agents then need read access only and write through the gate at meter-url; a result this account posts counts "+
			"as an agent's only with the meter's signed word of the agent's login (agents maps it). Empty: agents write the issue themselves.",
		func(r *Resolved, v Value) bool {
			login := strings.TrimSpace(v.Text)
			if strings.ContainsAny(login, " \t/@") {
				return false
			}
			r.Config.GateAccount = login
			return true
		}),
	newRow("prices", List, "", "items MODEL INPUT OUTPUT [CACHED], dollars per million tokens", inFile,
		"Model prices the meter puts on receipts and in gns-guard status: one item per model, MODEL INPUT OUTPUT [CACHED] in dollars "+
			"per million tokens (cached input defaults to the input price), e.g. gpt-4o 2.50 10.00 1.25.",
		func(r *Resolved, v Value) bool {
			p, ok := parsePrices(listOf(v))
			if ok {
				r.Config.Prices = p
			}
			return ok
		}),
	parsedRow("money-cap", String, "", "an amount in dollars such as 5 or 12.50, or nothing", inInput|inFile|inFlag,
		parseMoney, func(c *config.Config) *int64 { return &c.MoneyCap },
		"Most an issue may spend through the meter, in dollars, priced with prices; a call that could pass it is refused. Empty: no cap."),
}

// parseDuration takes whole days ("7d") or time.ParseDuration ("36h"),
// positive.
func parseDuration(text string) (time.Duration, bool) {
	t := strings.TrimSpace(text)
	if days, ok := strings.CutSuffix(t, "d"); ok {
		n, err := strconv.ParseInt(days, 10, 64)
		if err != nil || n < 1 || n > 36500 {
			return 0, false
		}
		return time.Duration(n) * 24 * time.Hour, true
	}
	d, err := time.ParseDuration(t)
	return d, err == nil && d > 0
}

// agentName and login are what an agents item may hold: an agent's name
// as a result comment's header carries it, and a Gitea login.
var (
	agentName = regexp.MustCompile(`^[^\s|=,]+$`)
	loginName = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)
)

// ParseAgents reads the items of agents, NAME=LOGIN each, into the map
// of agent names to logins; an item that is not one says so.
func ParseAgents(items []string) (map[string][]string, error) {
	var out map[string][]string
	for _, item := range items {
		name, login, ok := strings.Cut(item, "=")
		name, login = strings.TrimSpace(name), strings.TrimSpace(login)
		if !ok || !agentName.MatchString(name) || !loginName.MatchString(login) {
			return nil, fmt.Errorf("%s is not NAME=LOGIN (an agent's name without spaces, |, = or commas, and a Gitea login)", markdown.Quote(item))
		}
		if out == nil {
			out = map[string][]string{}
		}
		if !slices.Contains(out[name], login) {
			out[name] = append(out[name], login)
		}
	}
	return out, nil
}

// parsePrices reads the items of prices: MODEL INPUT OUTPUT [CACHED].
func parsePrices(items []string) (map[string]config.Price, bool) {
	var out map[string]config.Price
	for _, item := range items {
		f := strings.Fields(item)
		if len(f) < 3 || len(f) > 4 {
			return nil, false
		}
		var n [3]float64
		for i, t := range f[1:] {
			x, err := strconv.ParseFloat(strings.TrimPrefix(t, "$"), 64)
			if err != nil || x < 0 || math.IsInf(x, 0) || math.IsNaN(x) {
				return nil, false
			}
			n[i] = x
		}
		if len(f) == 3 {
			n[2] = n[0]
		}
		if out == nil {
			out = map[string]config.Price{}
		}
		out[f[0]] = config.Price{Input: n[0], Output: n[1], Cached: n[2]}
	}
	return out, true
}

// parseMoney reads an amount in dollars ("" is none) as millionths.
func parseMoney(text string) (int64, bool) {
	t := strings.TrimPrefix(strings.TrimSpace(text), "$")
	if t == "" {
		return 0, true
	}
	x, err := strconv.ParseFloat(t, 64)
	if err != nil || x <= 0 || x > 1e9 {
		return 0, false
	}
	return int64(math.Round(x * 1e6)), true
}

// byName indexes rows by Name.
var byName = func() map[string]*row {
	m := make(map[string]*row, len(rows))
	for i := range rows {
		m[rows[i].Name] = &rows[i]
	}
	return m
}()

// Table follows action.yml's inputs; the slice is the caller's.
func Table() []Setting {
	out := make([]Setting, len(rows))
	for i, r := range rows {
		out[i] = r.Setting
		out[i].Choices = slices.Clone(r.Choices)
	}
	return out
}

// Lookup returns the setting named name (kebab-case, as in action.yml).
func Lookup(name string) (Setting, bool) {
	r, ok := byName[name]
	if !ok {
		return Setting{}, false
	}
	return r.Setting, true
}

// names lists kept settings in table order.
func names(keep func(Setting) bool) []string {
	var out []string
	for _, r := range rows {
		if keep(r.Setting) {
			out = append(out, r.Name)
		}
	}
	return out
}

// parseBool takes true/false, yes/no, on/off, 1/0 in any case.
func parseBool(s string) (b, ok bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "yes", "on", "1":
		return true, true
	case "false", "no", "off", "0":
		return false, true
	}
	return false, false
}

func enumRow(name, def string, w where, values []string, field func(*config.Config) *string, desc string) row {
	return newRow(name, Enum, def, "", w, desc, func(r *Resolved, v Value) bool {
		s := strings.TrimSpace(v.Text)
		for _, ok := range values {
			if strings.EqualFold(s, ok) {
				*field(&r.Config) = ok
				return true
			}
		}
		return false
	}).choices(values...)
}

// floatRow is lo (if loIncl) or above, up to hi.
func floatRow(name, def string, w where, lo float64, loIncl bool, hi float64, field func(*config.Config) *float64, desc string) row {
	g := func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
	rng := "a number above " + g(lo)
	if loIncl {
		rng = "a number from " + g(lo)
	}
	if !math.IsInf(hi, 1) {
		rng += " up to " + g(hi)
	}
	return newRow(name, Float, def, rng, w, desc, func(r *Resolved, v Value) bool {
		f, err := strconv.ParseFloat(strings.TrimSpace(v.Text), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < lo || f == lo && !loIncl || f > hi {
			return false
		}
		*field(&r.Config) = f
		return true
	})
}

// intRow is >= least; with emptyMeans, nothing means zero.
func intRow[T int | int64](name, def string, w where, least int64, emptyMeans string, field func(*config.Config) *T, desc string) row {
	rng := "a whole number >= " + strconv.FormatInt(least, 10)
	if emptyMeans != "" {
		rng += ", or nothing for " + emptyMeans
	}
	return newRow(name, Int, def, rng, w, desc, func(r *Resolved, v Value) bool {
		s := strings.TrimSpace(v.Text)
		if s == "" && emptyMeans != "" {
			*field(&r.Config) = 0
			return true
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < least || int64(T(n)) != n {
			return false
		}
		*field(&r.Config) = T(n)
		return true
	})
}

// parsedRow refuses text parse cannot read into field.
func parsedRow[T any](name string, k Kind, def, rng string, w where, parse func(string) (T, bool), field func(*config.Config) *T, desc string) row {
	return newRow(name, k, def, rng, w, desc, func(r *Resolved, v Value) bool {
		x, ok := parse(v.Text)
		if ok {
			*field(&r.Config) = x
		}
		return ok
	})
}

// keyRow is an input only, trimmed ("" unsets); needs ledger.MinKeyBits.
func keyRow(name string, strong bool, field func(*config.Config) *[]byte, desc string) row {
	rng := "a key"
	if strong {
		rng = "a key of " + ledger.KeyRule
	}
	r := newRow(name, Secret, "", rng, inInput, desc, func(r *Resolved, v Value) bool {
		k := strings.TrimSpace(v.Text)
		if strong && k != "" && ledger.CheckKey([]byte(k)) != nil {
			return false
		}
		*field(&r.Config) = nil
		if k != "" {
			*field(&r.Config) = []byte(k)
		}
		return true
	})
	r.why = func(v Value) string { return ledger.CheckKey([]byte(v.Text)).Error() }
	return r
}

func listRow(name, def string, w where, field func(*config.Config) *[]string, desc string) row {
	return newRow(name, List, def, "names, comma- or newline-separated (in the file also a YAML list)", w, desc,
		func(r *Resolved, v Value) bool {
			*field(&r.Config) = listOf(v)
			return true
		})
}

// listOf is a list value's items: a YAML list's items, or the text split
// at commas and newlines; trimmed, with empty items dropped.
func listOf(v Value) []string {
	if !v.IsList {
		return config.ParseList(v.Text)
	}
	var out []string
	for _, s := range v.List {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
