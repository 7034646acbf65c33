package settings

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

// TestDefaults: with no layers, Resolve yields exactly the configuration of
// an action step with no inputs, from the table's defaults alone.
func TestDefaults(t *testing.T) {
	r, err := Resolve()
	if err != nil {
		t.Fatal(err)
	}
	if want := config.Default(); !reflect.DeepEqual(r.Config, want) {
		t.Errorf("Resolve().Config =\n  %+v\nguard.DefaultConfig() =\n  %+v", r.Config, want)
	}
	if r.Token != "" || r.AdminToken != "" || r.LedgerPublicKey != "" {
		t.Errorf("Resolve() gives tokens or a key: %+v", r)
	}
	if len(r.From) != len(Table()) {
		t.Errorf("From has %d settings, the table %d", len(r.From), len(Table()))
	}
	for _, s := range Table() {
		if r.From[s.Name] != "default" {
			t.Errorf("From[%s] = %q, want default", s.Name, r.From[s.Name])
		}
	}
}

// TestTable holds the table to its own rules.
func TestTable(t *testing.T) {
	kebab := regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)
	seen := map[string]bool{}
	for _, s := range Table() {
		if !kebab.MatchString(s.Name) {
			t.Errorf("%q is not kebab-case", s.Name)
		}
		if seen[s.Name] {
			t.Errorf("%s is in the table twice", s.Name)
		}
		seen[s.Name] = true
		if got, ok := Lookup(s.Name); !ok || !reflect.DeepEqual(got, s) {
			t.Errorf("Lookup(%s) = %+v, %v", s.Name, got, ok)
		}
		if s.Kind == Secret && (s.File || s.Flag) {
			t.Errorf("%s is a secret, yet may be set in the file or as a flag", s.Name)
		}
		if !s.Input && !s.File && !s.Flag {
			t.Errorf("%s has no source", s.Name)
		}
		if s.Range == "" || !strings.HasSuffix(s.Description, ".") || strings.Contains(s.Description, "\n") {
			t.Errorf("%s: want a Range and a one-line Description ending with a period", s.Name)
		}
		if s.ActionDefault != "" && (s.File || !s.Input) {
			t.Errorf("%s: only an input no file may set has an ActionDefault", s.Name)
		}
		if s.Kind.String() == "" || strings.HasPrefix(s.Kind.String(), "Kind(") {
			t.Errorf("%s: kind %d has no name", s.Name, s.Kind)
		}
	}
	if _, ok := Lookup("no-such-setting"); ok {
		t.Error("Lookup found no-such-setting")
	}
	tab := Table()
	tab[0].Name = "changed"
	if Table()[0].Name == "changed" {
		t.Error("Table shares its slice with the caller")
	}
}

// valueCase is one value of one setting. A bad value has want: what the
// error says is expected.
type valueCase struct {
	name, text string
	want       string               // "" for a good value
	check      func(c Resolved) any // what the value sets
	expect     any                  // the check's result for a good value
	layers     string               // the layers to try ("" = every layer of the setting)
}

const (
	wantAgents    = "a mapping of agent names to Gitea logins (NAME: LOGIN, or NAME: [LOGIN, ...]), or items NAME=LOGIN"
	wantFloat01   = "a number above 0 up to 1"
	wantRatio     = "a number from 0 up to 1"
	wantGrant     = "a whole number >= 0"
	wantTail      = "a whole number >= 1"
	wantDepth     = "a whole number >= 0, n (unlimited), or nothing"
	wantBudget    = "a whole number >= 1, or nothing for no cap"
	wantPressure  = "a number above 0"
	wantEncoding  = "cl100k_base or o200k_base"
	wantFailOn    = "violation or never"
	wantBool      = "true or false (also yes/no, on/off, 1/0)"
	wantDigest    = "a whole number >= 0"
	wantCkptBytes = "a whole number >= 1"
)

func depth(n int) *int { return &n }

var (
	failOn        = func(c Resolved) any { return c.Config.FailOn }
	dryRun        = func(c Resolved) any { return c.Config.DryRun }
	pruneThr      = func(c Resolved) any { return c.Config.PruneThreshold }
	carryover     = func(c Resolved) any { return c.Config.CarryoverRatio }
	phaseGrant    = func(c Resolved) any { return c.Config.PhaseGrant }
	historyTail   = func(c Resolved) any { return c.Config.HistoryTail }
	maxDepth      = func(c Resolved) any { return c.Config.DefaultMaxDepth }
	agents        = func(c Resolved) any { return c.Config.AllowedAgents }
	admins        = func(c Resolved) any { return c.Config.BudgetAdmins }
	maxBudget     = func(c Resolved) any { return c.Config.MaxBudget }
	protected     = func(c Resolved) any { return c.Config.ProtectedPaths }
	pressure      = func(c Resolved) any { return c.Config.PressureThreshold }
	encoding      = func(c Resolved) any { return c.Config.Encoding }
	ckptBytes     = func(c Resolved) any { return c.Config.MaxCheckpointBytes }
	digestAfter   = func(c Resolved) any { return c.Config.DigestAfter }
	metricsFile   = func(c Resolved) any { return c.Config.MetricsFile }
	publicKey     = func(c Resolved) any { return c.LedgerPublicKey }
	issueNumber   = func(c Resolved) any { return c.IssueNumber }
	underReport   = func(c Resolved) any { return c.Config.UnderReport }
	metering      = func(c Resolved) any { return c.Config.Metering }
	agentsMap     = func(c Resolved) any { return c.Config.Agents }
	loadFrom      = func(c Resolved) any { return c.Config.LoadCommentsFrom }
	meterKey      = func(c Resolved) any { return c.Config.MeterPublicKey }
	meterURL      = func(c Resolved) any { return c.Config.MeterURL }
	gateAccount   = func(c Resolved) any { return c.Config.GateAccount }
	prices        = func(c Resolved) any { return c.Config.Prices }
	moneyCap      = func(c Resolved) any { return c.Config.MoneyCap }
	staleAfter    = func(c Resolved) any { return c.Config.StaleAfter }
	repoBudget    = func(c Resolved) any { return c.Config.RepositoryBudget }
	repoWindow    = func(c Resolved) any { return c.Config.RepositoryBudgetWindow }
	unjudgedGrace = func(c Resolved) any { return c.Config.UnjudgedGrace }
	mode          = func(c Resolved) any { return c.Mode }
	token         = func(c Resolved) any { return c.Token }
	adminToken    = func(c Resolved) any { return c.AdminToken }
	ledgerKey     = func(c Resolved) any { return string(c.Config.LedgerKey) }
	ledgerKeyPrev = func(c Resolved) any { return string(c.Config.LedgerKeyPrevious) }
	testPublicKey = ledger.PublicKey([]byte("a ledger key"))
	unlimited     = config.Unlimited
	valueCases    = []valueCase{
		{name: "fail-on", text: "violation", check: failOn, expect: "violation"},
		{name: "fail-on", text: "never", check: failOn, expect: "never"},
		{name: "fail-on", text: " Never ", check: failOn, expect: "never"},
		{name: "fail-on", text: "always", want: wantFailOn},
		{name: "fail-on", text: "", want: wantFailOn, layers: "file flag"},

		{name: "dry-run", text: "true", check: dryRun, expect: true},
		{name: "dry-run", text: "YES", check: dryRun, expect: true},
		{name: "dry-run", text: "on", check: dryRun, expect: true},
		{name: "dry-run", text: "1", check: dryRun, expect: true},
		{name: "dry-run", text: "False", check: dryRun, expect: false},
		{name: "dry-run", text: "no", check: dryRun, expect: false},
		{name: "dry-run", text: "OFF", check: dryRun, expect: false},
		{name: "dry-run", text: "0", check: dryRun, expect: false},
		{name: "dry-run", text: "maybe", want: wantBool},
		{name: "dry-run", text: "2", want: wantBool},

		{name: "prune-threshold", text: "1", check: pruneThr, expect: 1.0},
		{name: "prune-threshold", text: "0.01", check: pruneThr, expect: 0.01},
		{name: "prune-threshold", text: " .75 ", check: pruneThr, expect: 0.75},
		{name: "prune-threshold", text: "0", want: wantFloat01},
		{name: "prune-threshold", text: "2", want: wantFloat01},
		{name: "prune-threshold", text: "1.0001", want: wantFloat01},
		{name: "prune-threshold", text: "-0.5", want: wantFloat01},
		{name: "prune-threshold", text: "NaN", want: wantFloat01},
		{name: "prune-threshold", text: "eighty", want: wantFloat01},
		{name: "prune-threshold", text: "", want: wantFloat01, layers: "file flag"},

		{name: "carryover-ratio", text: "0", check: carryover, expect: 0.0},
		{name: "carryover-ratio", text: "1", check: carryover, expect: 1.0},
		{name: "carryover-ratio", text: "0.25", check: carryover, expect: 0.25},
		{name: "carryover-ratio", text: "-0.1", want: wantRatio},
		{name: "carryover-ratio", text: "1.5", want: wantRatio},
		{name: "carryover-ratio", text: "half", want: wantRatio},

		{name: "phase-grant", text: "0", check: phaseGrant, expect: int64(0)},
		{name: "phase-grant", text: "50000", check: phaseGrant, expect: int64(50000)},
		{name: "phase-grant", text: "-1", want: wantGrant},
		{name: "phase-grant", text: "1.5", want: wantGrant},
		{name: "phase-grant", text: "99999999999999999999", want: wantGrant},

		{name: "history-tail", text: "1", check: historyTail, expect: 1},
		{name: "history-tail", text: "10", check: historyTail, expect: 10},
		{name: "history-tail", text: "0", want: wantTail},
		{name: "history-tail", text: "3.0", want: wantTail},
		{name: "history-tail", text: "three", want: wantTail},

		{name: "default-max-depth", text: "0", check: maxDepth, expect: depth(0)},
		{name: "default-max-depth", text: "3", check: maxDepth, expect: depth(3)},
		{name: "default-max-depth", text: "n", check: maxDepth, expect: &unlimited},
		{name: "default-max-depth", text: "N", check: maxDepth, expect: &unlimited},
		{name: "default-max-depth", text: "", check: maxDepth, expect: (*int)(nil), layers: "file flag"},
		{name: "default-max-depth", text: "-1", want: wantDepth},
		{name: "default-max-depth", text: "2.5", want: wantDepth},
		{name: "default-max-depth", text: "unlimited", want: wantDepth},

		{name: "allowed-agents", text: "coder", check: agents, expect: []string{"coder"}},
		{name: "allowed-agents", text: " planner, coder ,\nreviewer\n", check: agents, expect: []string{"planner", "coder", "reviewer"}},
		{name: "allowed-agents", text: " , ", check: agents, expect: []string(nil)},
		{name: "budget-admins", text: "alice,bob", check: admins, expect: []string{"alice", "bob"}},
		{name: "protected-paths", text: ".kilo/, .gitea/", check: protected, expect: []string{".kilo/", ".gitea/"}},
		{name: "protected-paths", text: "", check: protected, expect: []string(nil), layers: "file flag"},

		{name: "max-budget", text: "1", check: maxBudget, expect: int64(1)},
		{name: "max-budget", text: "200000", check: maxBudget, expect: int64(200000)},
		{name: "max-budget", text: "", check: maxBudget, expect: int64(0), layers: "file flag"},
		{name: "max-budget", text: "0", want: wantBudget},
		{name: "max-budget", text: "-5", want: wantBudget},
		{name: "max-budget", text: "lots", want: wantBudget},

		{name: "pressure-threshold", text: "0.1", check: pressure, expect: 0.1},
		{name: "pressure-threshold", text: "5", check: pressure, expect: 5.0},
		{name: "pressure-threshold", text: "0", want: wantPressure},
		{name: "pressure-threshold", text: "-1", want: wantPressure},
		{name: "pressure-threshold", text: "Inf", want: wantPressure},

		{name: "encoding", text: "o200k_base", check: encoding, expect: tokens.O200kBase},
		{name: "encoding", text: "CL100K_BASE", check: encoding, expect: tokens.CL100kBase},
		{name: "encoding", text: "gpt2", want: wantEncoding},

		{name: "max-checkpoint-bytes", text: "1", check: ckptBytes, expect: 1},
		{name: "max-checkpoint-bytes", text: "1048576", check: ckptBytes, expect: 1 << 20},
		{name: "max-checkpoint-bytes", text: "0", want: wantCkptBytes},
		{name: "max-checkpoint-bytes", text: "64k", want: wantCkptBytes},

		{name: "digest-after", text: "0", check: digestAfter, expect: 0},
		{name: "digest-after", text: "7", check: digestAfter, expect: 7},
		{name: "digest-after", text: "-1", want: wantDigest},

		{name: "metrics-file", text: " .kilo/logs/context-budget.jsonl ", check: metricsFile, expect: ".kilo/logs/context-budget.jsonl"},
		{name: "ledger-public-key", text: " " + testPublicKey + " ", check: publicKey, expect: testPublicKey},
		{name: "ledger-public-key", text: "ed25519:AAAA", want: "ed25519: and 44 characters of base64, as gns-guard pubkey prints it"},
		{name: "ledger-key-previous", text: "0ld", check: ledgerKeyPrev, expect: "0ld"},
		{name: "under-report", text: "FAIL", check: underReport, expect: "fail"},
		{name: "under-report", text: "off", check: underReport, expect: "off"},
		{name: "under-report", text: "loud", want: "warn, fail or off"},
		{name: "agents", text: "code-reviewer=rev-bot, tester=test-bot,tester=qa", check: agentsMap, expect: map[string][]string{"code-reviewer": {"rev-bot"}, "tester": {"test-bot", "qa"}}},
		{name: "agents", text: "", check: agentsMap, expect: map[string][]string(nil)},
		{name: "agents", text: "code-reviewer", want: wantAgents},
		{name: "agents", text: "code reviewer=bob", want: wantAgents},
		{name: "agents", text: "tester=a b", want: wantAgents},
		{name: "load-comments-from", text: "Everyone", check: loadFrom, expect: "everyone"},
		{name: "load-comments-from", text: "writers", check: loadFrom, expect: "writers"},
		{name: "load-comments-from", text: "friends", want: "writers or everyone"},
		{name: "metering", text: "Required", check: metering, expect: "required"},
		{name: "metering", text: "sometimes", want: "off or required"},
		{name: "meter-public-key", text: testPublicKey, check: meterKey, expect: testPublicKey},
		{name: "meter-public-key", text: "ed25519:AAAA", want: "ed25519: and 44 characters of base64, as gns-guard meter --public-key prints it"},
		{name: "meter-url", text: " http://meter:8787/ ", check: meterURL, expect: "http://meter:8787"},
		{name: "gate-account", text: " gns-gate ", check: gateAccount, expect: "gns-gate"},
		{name: "gate-account", text: "gns gate", want: "a Gitea login, or nothing"},
		{name: "meter-url", text: "meter:8787", want: "an http or https URL, or nothing"},
		{name: "prices", text: "gpt-4o 2.50 10.00 1.25, claude-sonnet-4-5 3 15", check: prices, expect: map[string]config.Price{"gpt-4o": {Input: 2.5, Output: 10, Cached: 1.25}, "claude-sonnet-4-5": {Input: 3, Output: 15, Cached: 3}}},
		{name: "prices", text: "gpt-4o cheap", want: "items MODEL INPUT OUTPUT [CACHED], dollars per million tokens"},
		{name: "money-cap", text: "$12.50", check: moneyCap, expect: int64(12500000)},
		{name: "money-cap", text: "", check: moneyCap, expect: int64(0), layers: "file flag"},
		{name: "money-cap", text: "-1", want: "an amount in dollars such as 5 or 12.50, or nothing"},
		{name: "unjudged-grace", text: "5s", check: unjudgedGrace, expect: 5 * time.Second},
		{name: "unjudged-grace", text: " 2m ", check: unjudgedGrace, expect: 2 * time.Minute},
		{name: "unjudged-grace", text: "0s", want: "a duration such as 2m, 90s or 1h"},
		{name: "stale-after", text: "3d", check: staleAfter, expect: 72 * time.Hour},
		{name: "stale-after", text: " 36h ", check: staleAfter, expect: 36 * time.Hour},
		{name: "stale-after", text: "0d", want: "a duration such as 7d, 36h or 90m"},
		{name: "stale-after", text: "-5m", want: "a duration such as 7d, 36h or 90m"},
		{name: "stale-after", text: "soon", want: "a duration such as 7d, 36h or 90m"},
		{name: "repository-budget", text: "2000000", check: repoBudget, expect: int64(2000000)},
		{name: "repository-budget", text: "", check: repoBudget, expect: int64(0), layers: "file flag"},
		{name: "repository-budget", text: "0", want: wantBudget},
		{name: "repository-budget", text: "a lot", want: wantBudget},
		{name: "repository-budget-window", text: "1d", check: repoWindow, expect: 24 * time.Hour},
		{name: "repository-budget-window", text: " 12h ", check: repoWindow, expect: 12 * time.Hour},
		{name: "repository-budget-window", text: "0d", want: "a duration such as 7d, 36h or 90m"},
		{name: "repository-budget-window", text: "weekly", want: "a duration such as 7d, 36h or 90m"},
		{name: "mode", text: "Dashboard", check: mode, expect: "dashboard"},
		{name: "mode", text: "issue", check: mode, expect: "issue"},
		{name: "mode", text: "repo", want: "issue or dashboard"},
		{name: "issue-number", text: " 42 ", check: issueNumber, expect: int64(42)},
		{name: "issue-number", text: "0", want: "a whole number >= 1, or nothing"},
		{name: "issue-number", text: "#42", want: "a whole number >= 1, or nothing"},
		{name: "token", text: " t0ken ", check: token, expect: "t0ken"},
		{name: "admin-token", text: "adm1n", check: adminToken, expect: "adm1n"},
		{name: "ledger-key", text: " 8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f ", check: ledgerKey, expect: "8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f"},
	}
)

// layersOf are the layers a case is tried through.
func layersOf(c valueCase) []string {
	s, _ := Lookup(c.name)
	var out []string
	for _, l := range []struct {
		name string
		ok   bool
	}{{"file", s.File}, {"input", s.Input}, {"flag", s.Flag}} {
		if l.ok && (c.layers == "" || slices.Contains(strings.Fields(c.layers), l.name)) {
			out = append(out, l.name)
		}
	}
	return out
}

// through resolves one value given through one layer, and says where it
// came from and where a bad one is reported.
func through(t *testing.T, layer, name, text string) (r Resolved, from, prefix string, err error) {
	t.Helper()
	switch layer {
	case "file":
		data := "# settings\n" + name + ": " + strconv.Quote(text) + "\n"
		l, ferr := FileLayer(FileName, []byte(data))
		if ferr != nil {
			t.Fatalf("FileLayer(%q): %v", data, ferr)
		}
		r, err = Resolve(l)
		return r, FileName + ":2", fmt.Sprintf("%s:2:%d: %s: ", FileName, len(name)+3, name), err
	case "input":
		l := InputLayer(func(n string) string {
			if n == name {
				return text
			}
			return ""
		})
		r, err = Resolve(l)
		return r, "input", "input " + name + ": ", err
	case "flag":
		fs := flag.NewFlagSet("verb", flag.ContinueOnError)
		get := Flags(fs)
		if perr := fs.Parse([]string{"--" + name + "=" + text}); perr != nil {
			t.Fatal(perr)
		}
		r, err = Resolve(get())
		return r, "flag --" + name, "--" + name + ": ", err
	}
	panic(layer)
}

// TestValues tries every setting's good and bad values through each layer
// that may give it, and checks the exact error.
func TestValues(t *testing.T) {
	covered := map[string]bool{}
	for _, c := range valueCases {
		covered[c.name] = true
		for _, layer := range layersOf(c) {
			t.Run(fmt.Sprintf("%s/%s=%q", layer, c.name, c.text), func(t *testing.T) {
				r, from, prefix, err := through(t, layer, c.name, c.text)
				if c.want != "" {
					got := "nothing"
					if c.text != "" {
						got = strconv.Quote(c.text)
					}
					want := prefix + "expected " + c.want + ", got " + got
					var e *Error
					if err == nil || !errors.As(err, &e) || err.Error() != want {
						t.Fatalf("error %v\nwant      %s", err, want)
					}
					if r.From[c.name] != "default" {
						t.Errorf("a bad value is applied: From = %q", r.From[c.name])
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if got := c.check(r); !reflect.DeepEqual(got, c.expect) {
					t.Errorf("got %#v, want %#v", got, c.expect)
				}
				if r.From[c.name] != from {
					t.Errorf("From = %q, want %q", r.From[c.name], from)
				}
			})
		}
	}
	for _, s := range Table() {
		if !covered[s.Name] {
			t.Errorf("no value case for %s", s.Name)
		}
	}
}

// TestEmptyInputIsNotGiven: a runner hands the step "" for an input the
// workflow leaves out; it leaves the file's value.
func TestEmptyInputIsNotGiven(t *testing.T) {
	file, err := FileLayer(FileName, []byte("max-budget: 5000\nprotected-paths: []\n"))
	if err != nil {
		t.Fatal(err)
	}
	in := InputLayer(func(string) string { return "  " })
	if len(in.Values) != 0 {
		t.Errorf("blank inputs make values: %v", in.Values)
	}
	r, err := Resolve(file, in)
	if err != nil {
		t.Fatal(err)
	}
	if r.Config.MaxBudget != 5000 || r.Config.ProtectedPaths != nil {
		t.Errorf("max-budget %d, protected-paths %q; want the file's 5000 and none", r.Config.MaxBudget, r.Config.ProtectedPaths)
	}
}

// TestPrecedence: default < file < inputs (or flags), setting by setting.
func TestPrecedence(t *testing.T) {
	file, err := FileLayer(FileName, []byte("prune-threshold: 0.7\nhistory-tail: 5\nallowed-agents: [a, b]\nmax-budget: 100\n"))
	if err != nil {
		t.Fatal(err)
	}
	inputs := map[string]string{"prune-threshold": "0.6", "token": "tok"}
	in := InputLayer(func(n string) string { return inputs[n] })
	r, err := Resolve(file, in)
	if err != nil {
		t.Fatal(err)
	}
	c := r.Config
	if c.PruneThreshold != 0.6 || c.HistoryTail != 5 || !slices.Equal(c.AllowedAgents, []string{"a", "b"}) || c.CarryoverRatio != 0.5 || r.Token != "tok" {
		t.Errorf("got %+v", c)
	}
	wantFrom := map[string]string{
		"prune-threshold": "input", "history-tail": FileName + ":2", "allowed-agents": FileName + ":3",
		"max-budget": FileName + ":4", "carryover-ratio": "default", "token": "input",
	}
	for k, v := range wantFrom {
		if r.From[k] != v {
			t.Errorf("From[%s] = %q, want %q", k, r.From[k], v)
		}
	}

	fs := flag.NewFlagSet("verb", flag.ContinueOnError)
	get := Flags(fs)
	if err := fs.Parse([]string{"--history-tail", "7", "--max-budget="}); err != nil {
		t.Fatal(err)
	}
	flags := get()
	if len(flags.Values) != 2 {
		t.Errorf("the flag layer holds %v; want only the flags given", flags.Values)
	}
	r, err = Resolve(file, flags)
	if err != nil {
		t.Fatal(err)
	}
	if r.Config.HistoryTail != 7 || r.Config.MaxBudget != 0 || r.Config.PruneThreshold != 0.7 {
		t.Errorf("got %+v", r.Config)
	}
	if r.From["history-tail"] != "flag --history-tail" || r.From["max-budget"] != "flag --max-budget" || r.From["prune-threshold"] != FileName+":1" {
		t.Errorf("From = %v", r.From)
	}

	// A bad value is an error even when a later layer replaces it.
	bad, err := FileLayer(FileName, []byte("history-tail: 0\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Resolve(bad, InputLayer(func(n string) string { return map[string]string{"history-tail": "4"}[n] })); err == nil ||
		err.Error() != FileName+`:1:15: history-tail: expected a whole number >= 1, got "0"` {
		t.Errorf("error %v", err)
	}
}

// TestWeakLedgerKey: a ledger-key under 256 bits is refused, saying the
// minimum and how to make one, never showing the key; a weak
// ledger-key-previous is accepted (a rotation away from it must finish).
func TestWeakLedgerKey(t *testing.T) {
	for _, weak := range []string{"s3cret", strings.Repeat("ab", 31), "a pass phrase of many words but no measure"} {
		r, err := Resolve(InputLayer(func(n string) string { return map[string]string{"ledger-key": weak, "ledger-key-previous": weak}[n] }))
		want := "input ledger-key: the key is too weak: a ledger-key must hold at least 256 bits: 64 hexadecimal digits, or 43 characters of base64 (44 with its padding), as gns-guard keygen prints it; "
		if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), "Make one with gns-guard keygen") || strings.Contains(err.Error(), weak) {
			t.Errorf("ledger-key %q: error %v", weak, err)
		}
		if r.Config.LedgerKey != nil || string(r.Config.LedgerKeyPrevious) != weak {
			t.Errorf("ledger-key %q: key %q, previous %q", weak, r.Config.LedgerKey, r.Config.LedgerKeyPrevious)
		}
	}
}

// TestResolveKeepsGoodValues: on an error, every good value is still
// applied, secrets included, so that a caller can mask them.
func TestResolveKeepsGoodValues(t *testing.T) {
	inputs := map[string]string{"token": "tok", "ledger-key": "8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f8f", "prune-threshold": "2", "history-tail": "0", "digest-after": "9"}
	r, err := Resolve(InputLayer(func(n string) string { return inputs[n] }))
	if err == nil || err.Error() != `input prune-threshold: expected a number above 0 up to 1, got "2"` {
		t.Errorf("error %v; want the first bad input in table order", err)
	}
	if r.Token != "tok" || string(r.Config.LedgerKey) != inputs["ledger-key"] || r.Config.DigestAfter != 9 {
		t.Errorf("good values not applied: %+v", r)
	}
}

// TestFileNumbers: numbers and booleans may be written plain or quoted.
func TestFileNumbers(t *testing.T) {
	for _, data := range []string{
		"prune-threshold: 0.5\nmax-budget: 1000\ndry-run: true\ndefault-max-depth: 2\n",
		"prune-threshold: \"0.5\"\nmax-budget: '1000'\ndry-run: \"yes\"\ndefault-max-depth: '2'\n",
		"prune-threshold: .5\nmax-budget: 1000\ndry-run: on\ndefault-max-depth: 2\n",
	} {
		l, err := FileLayer(FileName, []byte(data))
		if err != nil {
			t.Fatal(err)
		}
		r, err := Resolve(l)
		if err != nil {
			t.Fatalf("%q: %v", data, err)
		}
		if c := r.Config; c.PruneThreshold != 0.5 || c.MaxBudget != 1000 || !c.DryRun || c.DefaultMaxDepth == nil || *c.DefaultMaxDepth != 2 {
			t.Errorf("%q: %+v", data, c)
		}
	}
}

// TestFileLists: a YAML list, a flow list and a comma- or newline-separated
// text give the same list; an empty list, or nothing, means none.
func TestFileLists(t *testing.T) {
	want := []string{"planner", "coder", "reviewer"}
	for _, data := range []string{
		"allowed-agents:\n  - planner\n  - \" coder \"\n  -\n  - reviewer\n",
		"allowed-agents: [planner, coder, reviewer]\n",
		"allowed-agents: planner, coder,reviewer\n",
		"allowed-agents: |\n  planner\n  coder\n\n  reviewer\n",
	} {
		l, err := FileLayer(FileName, []byte(data))
		if err != nil {
			t.Fatal(err)
		}
		r, err := Resolve(l)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(r.Config.AllowedAgents, want) {
			t.Errorf("%q: %q, want %q", data, r.Config.AllowedAgents, want)
		}
	}
	for _, data := range []string{"protected-paths: []\n", "protected-paths:\n", "protected-paths: \"\"\n", "protected-paths: ~\n"} {
		l, err := FileLayer(FileName, []byte(data))
		if err != nil {
			t.Fatal(err)
		}
		r, err := Resolve(l)
		if err != nil {
			t.Fatal(err)
		}
		if r.Config.ProtectedPaths != nil {
			t.Errorf("%q: protected-paths %q, want none", data, r.Config.ProtectedPaths)
		}
	}
}

// TestFileAgents: the agents map as a YAML mapping, a list of items or a
// text, all alike; a wrong shape is refused at its line.
func TestFileAgents(t *testing.T) {
	want := map[string][]string{"code-reviewer": {"rev-bot"}, "tester": {"test-bot", "qa"}}
	for _, data := range []string{
		"agents:\n  code-reviewer: rev-bot\n  tester: [test-bot, qa]\n",
		"agents: [code-reviewer=rev-bot, tester=test-bot, tester=qa]\n",
		"agents: code-reviewer=rev-bot, tester=test-bot, tester=qa\n",
	} {
		l, err := FileLayer(FileName, []byte(data))
		if err != nil {
			t.Fatal(err)
		}
		r, err := Resolve(l)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(r.Config.Agents, want) {
			t.Errorf("%q: %v, want %v", data, r.Config.Agents, want)
		}
	}
	for data, want := range map[string]string{
		"agents:\n  tester: {a: b}\n":      FileName + ":2:11: agents: expected a login, or a list of logins, got a mapping",
		"agents:\n  tester: [a b]\n":       FileName + ":2:3: agents: expected " + wantAgents + `, got "tester=a b"`,
		"allowed-agents:\n  tester: bob\n": FileName + ":2:3: allowed-agents: expected names, comma- or newline-separated (in the file also a YAML list), got a mapping",
	} {
		l, err := FileLayer(FileName, []byte(data))
		if err == nil {
			_, err = Resolve(l)
		}
		if err == nil || err.Error() != want {
			t.Errorf("%q: error %v\nwant  %s", data, err, want)
		}
	}
}

// TestEmptyFile: nothing, comments, a lone --- or ~ is an empty layer.
func TestEmptyFile(t *testing.T) {
	for _, data := range []string{"", "\n\n", "# nothing yet\n# at all\n", "---\n", "~\n", "--- # x\n...\n"} {
		l, err := FileLayer(FileName, []byte(data))
		if err != nil || len(l.Values) != 0 || l.Source != FileName {
			t.Errorf("%q: %v, %v", data, l, err)
		}
	}
}

// TestFileErrors checks the exact error of each malformed file.
func TestFileErrors(t *testing.T) {
	const f = FileName
	fileKeys := "fail-on, dry-run, prune-threshold, carryover-ratio, phase-grant, history-tail, default-max-depth, allowed-agents, budget-admins, max-budget, repository-budget, repository-budget-window, protected-paths, pressure-threshold, encoding, max-checkpoint-bytes, digest-after, metrics-file, under-report, stale-after, unjudged-grace, ledger-public-key, agents, load-comments-from, metering, meter-public-key, meter-url, gate-account, prices, money-cap"
	for _, c := range []struct{ data, want string }{
		// did you mean
		{"prune-treshold: 0.5\n", f + `:1:1: prune-treshold: unknown key (did you mean "prune-threshold"?)`},
		{"# x\nhistory_tail: 3\n", f + `:2:1: history_tail: unknown key (did you mean "history-tail"?)`},
		{"Max-Budget: 3\n", f + `:1:1: Max-Budget: unknown key (did you mean "max-budget"?)`},
		{"allowed: [a]\n", f + `:1:1: allowed: unknown key (did you mean "allowed-agents"?)`},
		{"colour: red\n", f + ":1:1: colour: unknown key; the keys are " + fileKeys},
		{"\"a b\": 1\n", f + `:1:1: "a b": unknown key; the keys are ` + fileKeys},
		{"? [a]\n: 1\n", f + ":1:3: expected a setting's name as the key, got a list"},
		// secrets
		{"ledger-key: abc\n", f + ":1:1: ledger-key: a secret never goes in this file, which anyone who can read the repository can read: delete the line, make a new key (this one is exposed), keep it in the repository's Actions secrets and pass it to the step as an input (ledger-key: ${{ secrets.GNS_GUARD_LEDGER_KEY }})"},
		{"fail-on: never\ntoken: abc\n", f + ":2:1: token: a secret never goes in this file, which anyone who can read the repository can read: delete the line, make a new token (this one is exposed), keep it in the repository's Actions secrets and pass it to the step as an input (token: ${{ secrets.GNS_GUARD_TOKEN }})"},
		{"admin-token:\n", f + ":1:1: admin-token: a secret never goes in this file, which anyone who can read the repository can read: delete the line, make a new token (this one is exposed), keep it in the repository's Actions secrets and pass it to the step as an input (admin-token: ${{ secrets.GNS_GUARD_ADMIN_TOKEN }})"},
		// shapes
		{"prune-threshold: {a: 1}\n", f + ":1:18: prune-threshold: expected a number above 0 up to 1, got a mapping"},
		{"history-tail: [1, 2]\n", f + ":1:15: history-tail: expected a whole number >= 1, got a list"},
		{"allowed-agents:\n  - a\n  - [b]\n", f + ":3:5: allowed-agents: expected a name in the list, got a list"},
		{"budget-admins: {alice: true}\n", f + ":1:16: budget-admins: expected names, comma- or newline-separated (in the file also a YAML list), got a mapping"},
		{"history-tail: 3\nhistory-tail: 4\n", f + ":2:1: history-tail: already set at line 1; keep one"},
		{"history-tail: &x 3\ndigest-after: *x\n", f + ":2:15: anchors and aliases are not allowed in this file; write the value out"},
		{"- fail-on\n", f + ":1:1: expected a mapping of settings (name: value, one a line), got a list"},
		{"hello\n", f + `:1:1: expected a mapping of settings (name: value, one a line), got string "hello"`},
		{"fail-on: never\n---\nfail-on: violation\n", f + ":2:1: a second YAML document starts here; keep the settings in one mapping, with no --- line among them"},
		{"max: 3\n", f + `:1:1: max: unknown key (did you mean "max-budget" or "max-checkpoint-bytes"?)`},
		// YAML syntax
		{"fail-on: a: b\n", f + ":1: not valid YAML: mapping values are not allowed in this context"},
		{"fail-on: never\ndry-run: true\nx: y: z\n", f + ":3: not valid YAML: mapping values are not allowed in this context"},
	} {
		_, err := FileLayer(FileName, []byte(c.data))
		var e *Error
		if err == nil || !errors.As(err, &e) || err.Error() != c.want {
			t.Errorf("%q:\n  error %v\n  want  %s", c.data, err, c.want)
		}
	}
}

// TestFileValueErrorsInOrder: the first bad value of a file, by line, is
// the error.
func TestFileValueErrorsInOrder(t *testing.T) {
	l, err := FileLayer(FileName, []byte("max-budget: 0\nfail-on: sometimes\n"))
	if err != nil {
		t.Fatal(err)
	}
	for range 5 { // map order must not matter
		if _, err := Resolve(l); err == nil || err.Error() != FileName+`:1:13: max-budget: expected a whole number >= 1, or nothing for no cap, got "0"` {
			t.Fatalf("error %v", err)
		}
	}
	l, err = FileLayer(FileName, []byte("fail-on: sometimes\nmax-budget: 0\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Resolve(l); err == nil || err.Error() != FileName+`:1:10: fail-on: expected violation or never, got "sometimes"` {
		t.Fatalf("error %v", err)
	}
}

// TestOversizeFile: a file over 64 KiB is refused before it is parsed.
func TestOversizeFile(t *testing.T) {
	line := "# " + strings.Repeat("x", 61) + "\n" // 64 bytes
	ok := strings.Repeat(line, MaxFileBytes/len(line))
	if _, err := FileLayer(FileName, []byte(ok)); err != nil {
		t.Errorf("a file of exactly %d bytes: %v", len(ok), err)
	}
	big := ok + "\n"
	_, err := FileLayer(FileName, []byte(big))
	want := FileName + ": the file is 65537 bytes, more than the 65536 (64 KiB) read; it holds only settings, one a line"
	if err == nil || err.Error() != want {
		t.Errorf("error %v\nwant  %s", err, want)
	}
	// Refused unparsed: even invalid YAML gets the size error.
	if _, err := FileLayer(FileName, append([]byte("a: b: c\n"), bytes.Repeat([]byte{'x'}, MaxFileBytes)...)); err == nil || !strings.Contains(err.Error(), "more than the 65536") {
		t.Errorf("error %v", err)
	}
}

// TestLayerRules: a layer gives only what its source may give, and a
// secret's value never shows in an error.
func TestLayerRules(t *testing.T) {
	for _, c := range []struct {
		layer Layer
		want  string
	}{
		{Layer{Source: SourceFlag, Values: map[string]Value{"token": {Text: "t"}}}, "--token: not a flag of this verb"},
		{Layer{Source: SourceFlag, Values: map[string]Value{"dry-run": {Text: "true"}}}, "--dry-run: not a flag of this verb"},
		{Layer{Source: SourceInput, Values: map[string]Value{"ledger-public-key": {Text: "k"}}}, "input ledger-public-key: not an input of the action; set it in .gitea/gns-guard.yml"},
		{Layer{Source: SourceInput, Values: map[string]Value{"prune-treshold": {Text: "1"}}}, `input prune-treshold: unknown setting (did you mean "prune-threshold"?)`},
		{Layer{Source: "local.yml", Values: map[string]Value{"history-tail": {IsList: true, List: []string{"1"}, Line: 4, Col: 3}}}, "local.yml:4:3: history-tail: expected a whole number >= 1, got a list"},
	} {
		_, err := Resolve(c.layer)
		if err == nil || err.Error() != c.want {
			t.Errorf("error %v\nwant  %s", err, c.want)
		}
	}
	_, err := Resolve(Layer{Source: FileName, Values: map[string]Value{"ledger-key": {Text: "s3cret", Line: 2, Col: 13}}})
	var e *Error
	if !errors.As(err, &e) || e.Value != "" || strings.Contains(err.Error(), "s3cret") || !strings.HasPrefix(err.Error(), FileName+":2:13: ledger-key: a secret never goes in this file") {
		t.Errorf("error %v (%+v)", err, e)
	}
}

// TestErrorText: the three shapes of an Error, and untrusted text quoted.
func TestErrorText(t *testing.T) {
	long := strings.Repeat("9", 60)
	for _, c := range []struct {
		e    Error
		want string
	}{
		{Error{Source: FileName, Key: "prune-threshold", Value: "2", Want: wantFloat01, Line: 3, Col: 18}, `.gitea/gns-guard.yml:3:18: prune-threshold: expected a number above 0 up to 1, got "2"`},
		{Error{Source: SourceInput, Key: "prune-threshold", Value: "2", Want: wantFloat01}, `input prune-threshold: expected a number above 0 up to 1, got "2"`},
		{Error{Source: SourceFlag, Key: "prune-threshold", Value: "2", Want: wantFloat01}, `--prune-threshold: expected a number above 0 up to 1, got "2"`},
		{Error{Source: SourceFlag, Key: "max-budget", Want: wantBudget}, `--max-budget: expected a whole number >= 1, or nothing for no cap, got nothing`},
		{Error{Source: "cfg.yml", Key: "history-tail", Value: long, Want: wantTail}, `cfg.yml: history-tail: expected a whole number >= 1, got "` + long[:48] + `"…`},
		{Error{Source: "cfg.yml", Key: "a\nb", Reason: "unknown key", Line: 1, Col: 1}, `cfg.yml:1:1: "a\nb": unknown key`},
		{Error{Source: "cfg.yml", Reason: "not valid YAML: x", Line: 7}, `cfg.yml:7: not valid YAML: x`},
		{Error{Source: SourceInput, Key: "fail-on", Value: "x\x1b[31m", Want: wantFailOn}, `input fail-on: expected violation or never, got "x\x1b[31m"`},
	} {
		if got := c.e.Error(); got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
}

// TestFlags: one string flag per Flag setting, the table's default in
// the help, no Go zero default, and only the flags given in the layer.
func TestFlags(t *testing.T) {
	fs := flag.NewFlagSet("verb", flag.ContinueOnError)
	get := Flags(fs)
	var registered []string
	fs.VisitAll(func(f *flag.Flag) {
		registered = append(registered, f.Name)
		s, ok := Lookup(f.Name)
		if !ok || !s.Flag {
			t.Errorf("flag %s is not a Flag setting", f.Name)
		}
		if f.DefValue != "" {
			t.Errorf("flag %s has Go default %q", f.Name, f.DefValue)
		}
		want := s.Description
		if s.Default != "" {
			want += " (default " + s.Default + ")"
		}
		if f.Usage != want {
			t.Errorf("flag %s: usage %q, want %q", f.Name, f.Usage, want)
		}
	})
	slices.Sort(registered)
	want := names(func(s Setting) bool { return s.Flag })
	slices.Sort(want)
	if !slices.Equal(registered, want) {
		t.Errorf("flags %v, want %v", registered, want)
	}
	for _, never := range []string{"token", "admin-token", "ledger-key", "metrics-file"} {
		if fs.Lookup(never) != nil {
			t.Errorf("%s is a flag", never)
		}
	}
	var help bytes.Buffer
	fs.SetOutput(&help)
	fs.PrintDefaults()
	if !strings.Contains(help.String(), "(default 0.8)") || strings.Contains(help.String(), `(default "")`) {
		t.Errorf("help:\n%s", help.String())
	}
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if l := get(); l.Source != SourceFlag || len(l.Values) != 0 {
		t.Errorf("no flags given, layer %+v", l)
	}
}

// TestExampleFile: the reference's example is a good file.
func TestExampleFile(t *testing.T) {
	l, err := FileLayer(FileName, []byte(ExampleFile))
	if err != nil {
		t.Fatal(err)
	}
	r, err := Resolve(l)
	if err != nil {
		t.Fatal(err)
	}
	c := r.Config
	if len(c.AllowedAgents) != 3 || len(c.BudgetAdmins) != 2 || c.MaxBudget != 200000 || !slices.Equal(c.ProtectedPaths, []string{".kilo/", ".gitea/"}) {
		t.Errorf("%+v", c)
	}
}

// TestConfigurationDoc holds docs/configuration.md to the table.
func TestConfigurationDoc(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "configuration.md")
	want := configurationDoc()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("docs/configuration.md is not what the settings table renders; run\n\tgo test ./internal/settings -run TestConfigurationDoc -update\nand commit the result")
	}
}

// TestChoices: an Enum lists its choices, each of which a flag (or an
// input, for one no flag sets) is accepted with, and a word outside them is
// refused; no other kind has choices.
func TestChoices(t *testing.T) {
	for _, s := range Table() {
		if s.Kind != Enum {
			if s.Choices != nil {
				t.Errorf("%s is a %s, yet has choices %q", s.Name, s.Kind, s.Choices)
			}
			continue
		}
		if len(s.Choices) < 2 {
			t.Errorf("%s is a choice with choices %q", s.Name, s.Choices)
		}
		src := SourceFlag
		if !s.Flag {
			src = SourceInput
		}
		for _, c := range append(slices.Clone(s.Choices), "no-such-choice") {
			_, err := Resolve(Layer{Source: src, Values: map[string]Value{s.Name: {Text: c}}})
			if (err == nil) != (c != "no-such-choice") {
				t.Errorf("%s = %q: error %v", s.Name, c, err)
			}
		}
	}
}
