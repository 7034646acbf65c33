package dashboard

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gns-guard/gns-guard/internal/burn"
	"github.com/gns-guard/gns-guard/internal/checkpoint"
	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/finding"
	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/handoff"
	"github.com/gns-guard/gns-guard/internal/issues"
	ledgerpkg "github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/live"
	"github.com/gns-guard/gns-guard/internal/port"
	"github.com/gns-guard/gns-guard/internal/tokens"
)

// MaxPages at 50 a page is 100,000 open issues.
const MaxPages = 2000

// Budget warnings: the used share at which a row warns.
const (
	WarnAt   = 60
	AlarmAt  = 80
	waitText = "waiting for a person"
)

// Sweep is one sweep of a repository.
type Sweep struct {
	// Reader reads each governed issue (the repository's reader).
	Reader *live.Reader
	// Lister lists the open issues.
	Lister port.IssueLister
	// Config is the file under the flags or inputs.
	Config config.Config
	// Repo is OWNER/NAME.
	Repo string
	// Now is the time the decision is made at; ServerNow, when not zero,
	// the server's clock, which stale compares the ledger's times with.
	Now, ServerNow func() time.Time
	// Skip leaves an issue out (the dashboard itself); author opened it.
	Skip func(is issues.Issue, author string) bool
	// Progress, when set, hears done of total per governed issue.
	Progress func(done, total int)
	// Workflows, when set, lets a disabled guard workflow be reported.
	Workflows port.WorkflowReader
	// Grants is the repository's grant list, when known (the runner hands
	// it to the action's dashboard run): the repository budget is read
	// from it, else summed from the open issues' records.
	Grants ledgerpkg.GrantState
}

// Result is what a sweep found.
type Result struct {
	Repo string `json:"repo"`
	// At is when the sweep decided.
	At time.Time `json:"at"`
	// Open counts the open issues listed, governed or not.
	Open int `json:"open"`
	// Rows are the open governed issues, by number, newest first.
	Rows []Row `json:"issues"`
	// Listed are every open issue, the dashboard among them.
	Listed []Listed `json:"-"`
	// StaleAfter is the stale-after setting the rows were judged with.
	StaleAfter time.Duration `json:"-"`
	// DisabledWorkflows run the guard; WorkflowNote says why they were
	// unlisted.
	DisabledWorkflows []string `json:"-"`
	WorkflowNote      string   `json:"-"`
	// Budget is the repository budget's burn (nil: no repository-budget).
	Budget *RepoBudget `json:"-"`
}

// RepoBudget is grants within repository-budget-window against
// repository-budget.
type RepoBudget struct {
	Granted, Limit int64
	Window         time.Duration
	// Summed says the grant list was not at hand: the figure adds the
	// grants the open issues' records hold, and misses those of issues
	// closed since. Problem says why the list could not be read.
	Summed  bool
	Problem string
}

// Listed is a listed issue with its opener.
type Listed struct {
	Issue  issues.Issue
	Author string
}

// Row is one open governed issue as judged now.
type Row struct {
	Number int64  `json:"number"`
	Title  string `json:"title"`
	// Phase, Depth, LastAgent and NextAgent are empty when unreadable.
	Phase string `json:"phase"`
	Depth *int64 `json:"depth"`
	// MaxDepth is the cascade limit: -1 unlimited, null unknown.
	MaxDepth *int         `json:"max_depth"`
	Budget   *IssueBudget `json:"budget"`
	// UsedPercent is whole; null when unknown or total is 0.
	UsedPercent *int `json:"used_percent"`
	// BudgetWarning is "", "60%" or "80%" (the share used reached it), or
	// "exhausted" (remaining ≤ 0, or the budget::exhausted label: it waits
	// for a person to approve more).
	BudgetWarning string `json:"budget_warning,omitempty"`
	// Waiting: budget::exhausted or permission::violation needs a person.
	Waiting bool `json:"waiting_for_person"`
	// Verdict is "pass" or "fail"; Rules fail, Warnings only warn.
	Verdict   string            `json:"verdict"`
	Rules     []string          `json:"rules"`
	Warnings  []string          `json:"warnings"`
	Findings  []finding.Finding `json:"findings"`
	LastAgent string            `json:"last_agent"`
	NextAgent string            `json:"next_agent"`
	// UpdatedAt is the issue's last activity (the server's updated_at).
	UpdatedAt time.Time `json:"updated_at"`
	// Progress is the last accepted progress: the time of the guard's
	// trusted ledger record, or the issue's last activity when it has
	// none (ProgressFrom says which).
	Progress     time.Time `json:"last_progress"`
	ProgressFrom string    `json:"last_progress_from"`
	// Stale says no progress was accepted for stale-after.
	Stale bool `json:"stale"`
	// Unjudged: the body changed unjudged past unjudged-grace; omitted when
	// judged.
	Unjudged *ledgerpkg.Unjudged `json:"unjudged,omitempty"`
	// Metered is the meter's count beside the report; omitted without one.
	Metered *Metered `json:"metered,omitempty"`
	// Gate is the gate's invocation tree; omitted ungated.
	Gate *Gate `json:"gate,omitempty"`

	burn   burn.Series
	grants []ledgerpkg.Grant // the grants its trusted record holds
}

// Metered counts every call, in tokens and millionths of a dollar.
type Metered struct {
	Calls  int64 `json:"calls"`
	Tokens int64 `json:"tokens"`
	Cost   int64 `json:"cost_micro_usd"`
}

// IssueBudget is an issue's token budget: the phase's three figures, and the issue's lifetime
// spend — what all its phases consumed (docs/pruning.md#lifetime-spend) —
// with the earlier phases' part.
type IssueBudget struct {
	Total     int64 `json:"total"`
	Consumed  int64 `json:"consumed"`
	Remaining int64 `json:"remaining"`
	Lifetime  int64 `json:"lifetime_consumed"`
	Earlier   int64 `json:"earlier_phases_consumed"`
}

// Run judges each open governed issue once, as the guard would.
func (s *Sweep) Run(ctx context.Context) (*Result, error) {
	res := &Result{Repo: s.Repo, Rows: []Row{}, StaleAfter: s.Config.StaleAfter}
	governed, err := s.list(ctx, res)
	if err != nil {
		return nil, err
	}
	res.Open = len(res.Listed)
	counter, err := tokens.New(s.Config.Encoding)
	if err != nil {
		return nil, &exitcode.CannotRunError{Err: err}
	}
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	res.At = now().UTC()
	s.disabledGuards(ctx, res)
	for i, is := range governed {
		snap, err := s.Reader.ReadIssue(ctx, is, live.ReadOptions{Window: s.Config.RecentWindow()})
		if errors.Is(err, issues.ErrNotFound) {
			continue // deleted since it was listed
		}
		if err != nil {
			return nil, err
		}
		row, err := s.judge(ctx, snap, counter, now())
		if err != nil {
			return nil, err
		}
		res.Rows = append(res.Rows, row)
		if s.Progress != nil {
			s.Progress(i+1, len(governed))
		}
	}
	slices.SortStableFunc(res.Rows, func(a, b Row) int { return cmp.Compare(b.Number, a.Number) })
	res.Budget = s.repoBudget(res)
	return res, nil
}

// list fills res.Listed once each and returns the governed, unskipped ones.
func (s *Sweep) list(ctx context.Context, res *Result) ([]issues.Issue, error) {
	seen := map[int64]bool{}
	var governed []issues.Issue
	for p := 1; ; p++ {
		if p > MaxPages {
			return nil, s.Reader.Where.Error("list the open issues", fmt.Errorf("more than %d pages of open issues", MaxPages))
		}
		page, err := s.Lister.ListIssues(ctx, port.IssueQuery{State: "open", Page: p})
		if err != nil {
			return nil, s.Reader.Where.Error(fmt.Sprintf("list the open issues (page %d)", p), err)
		}
		for _, is := range page.Issues {
			if seen[is.Number] {
				continue // an issue opened meanwhile pushed it to this page
			}
			seen[is.Number] = true
			author := page.Authors[is.Number]
			res.Listed = append(res.Listed, Listed{is, author})
			if s.Skip != nil && s.Skip(is, author) {
				continue
			}
			// Tell governed issues apart as the reader, hence the action, does.
			if guard.IsGoverned(is, config.Default()) {
				governed = append(governed, is)
			}
		}
		if page.Last || len(page.Issues) == 0 {
			return governed, nil
		}
	}
}

// judge decides as the next event's run would, writing nothing.
func (s *Sweep) judge(ctx context.Context, snap *live.Snapshot, counter *tokens.Counter, now time.Time) (Row, error) {
	is := snap.Issue
	n := is.Number
	row := Row{Number: n, Title: is.Title, UpdatedAt: is.UpdatedAt.UTC(), Rules: []string{}, Warnings: []string{}, Findings: []finding.Finding{}}
	in := snap.Input(s.Config, issues.Event{Name: "issues", Action: "edited", Number: n}, s.Repo, now, counter)
	in.Grants = s.Grants
	plan, _, err := s.Reader.Decide(ctx, in)
	if err != nil {
		return row, err
	}
	row.verdict(plan)
	parsed := checkpoint.Parse(is.Body, checkpoint.Options{Issue: n, MaxBytes: s.Config.MaxCheckpointBytes, TailLimit: s.Config.HistoryTail})
	if cp := parsed.Checkpoint; cp != nil && len(parsed.Blocks) == 1 {
		row.Phase, row.LastAgent, row.NextAgent = cp.Phase.Value, cp.LastAgent.Value, cp.NextAgent.Value
	}
	row.numbers(plan.Numbers)
	row.waiting(is.LabelNames(), s.Config.Labels)

	ledger, _ := ledgerpkg.Read(snap.Status, n, s.Reader.Keys)
	row.progress(ledger)
	row.Stale = s.Config.StaleAfter > 0 && s.clock(now).Sub(row.Progress) > s.Config.StaleAfter
	row.Unjudged = ledgerpkg.Behind(ledger, is, s.clock(now), s.Config.UnjudgedGrace)
	row.burn = series(snap, ledger, is)
	if ledger != nil {
		row.grants = ledger.Grants
	}
	return row, nil
}

// verdict lists failing rules, warnings and findings.
func (row *Row) verdict(plan *guard.Plan) {
	row.Verdict = "pass"
	for _, v := range plan.Violations {
		row.Verdict = "fail"
		if !slices.Contains(row.Rules, v.Rule) {
			row.Rules = append(row.Rules, v.Rule)
		}
	}
	for _, w := range plan.Warnings {
		if !slices.Contains(row.Warnings, w.Rule) {
			row.Warnings = append(row.Warnings, w.Rule)
		}
	}
	row.Findings = append(row.Findings, plan.Findings()...)
}

// numbers are the depth, its limit and the budget the guard measured, when
// known, and the warning the share of the budget used calls for.
func (row *Row) numbers(nums guard.Numbers) {
	if nums.Known {
		d := nums.Depth
		row.Depth = &d
		row.Budget = &IssueBudget{Total: nums.BudgetTotal, Consumed: nums.BudgetConsumed, Remaining: nums.BudgetRemaining,
			Lifetime: nums.Lifetime, Earlier: nums.EarlierPhases}
		if nums.BudgetTotal > 0 {
			p := int(nums.BudgetConsumed * 100 / nums.BudgetTotal)
			row.UsedPercent = &p
			switch {
			case p >= AlarmAt:
				row.BudgetWarning = "80%"
			case p >= WarnAt:
				row.BudgetWarning = "60%"
			}
		}
		if nums.BudgetRemaining <= 0 {
			row.BudgetWarning = "exhausted"
		}
	}
	if nums.MaxDepthKnown {
		m := nums.MaxDepth
		row.MaxDepth = &m
	}
}

// waiting marks a row whose issue waits for a person: it carries the
// budget-exhausted label (the budget is then exhausted) or the
// permission-violation label.
func (row *Row) waiting(labels []string, names config.LabelNames) {
	if slices.Contains(labels, names.BudgetExhausted) {
		row.BudgetWarning, row.Waiting = "exhausted", true
	}
	if slices.Contains(labels, names.PermissionViolation) {
		row.Waiting = true
	}
}

// progress is the clock stale reads: the guard's signed ledger record when
// there is one (its newest accepted step, else when it was written), the
// issue's last activity otherwise.
func (row *Row) progress(ledger *ledgerpkg.Record) {
	row.Progress, row.ProgressFrom = row.UpdatedAt, "activity"
	if ledger == nil || !ledger.Baseline {
		return
	}
	at := ledger.Written
	if k := len(ledger.Burn); k > 0 && ledger.Burn[k-1].T > 0 {
		at = ledger.Burn[k-1].T
	}
	if at > 0 {
		row.Progress, row.ProgressFrom = time.Unix(at, 0).UTC(), "ledger"
	}
}

// repoBudget is the repository budget's burn: from the grant list when it
// is at hand and verifies, else summed from the open issues' records.
func (s *Sweep) repoBudget(res *Result) *RepoBudget {
	cfg := s.Config
	if cfg.RepositoryBudget <= 0 {
		return nil
	}
	since := res.At.Add(-cfg.RepositoryBudgetWindow)
	rb := &RepoBudget{Limit: cfg.RepositoryBudget, Window: cfg.RepositoryBudgetWindow}
	if s.Grants.Known {
		var list *ledgerpkg.Grants
		if list, rb.Problem = ledgerpkg.ReadGrants(s.Grants.Text, 0, s.Reader.Keys); list != nil {
			rb.Granted = ledgerpkg.Sum(ledgerpkg.Since(list.Grants, since))
			return rb
		}
	}
	rb.Summed = true
	for _, row := range res.Rows {
		rb.Granted = ledgerpkg.AddTokens(rb.Granted, ledgerpkg.Sum(ledgerpkg.Since(row.grants, since)))
	}
	return rb
}

// clock is the server's clock when known, else now.
func (s *Sweep) clock(now time.Time) time.Time {
	if s.ServerNow != nil {
		if t := s.ServerNow(); !t.IsZero() {
			return t
		}
	}
	return now
}

// series is the issue's burn: the accepted steps its trusted ledger keeps
// or, for a ledger from before it kept them, the agent reports among the
// comments read that the guard accepted (the ledger's phase, and no
// further than its remaining budget), oldest first.
func series(snap *live.Snapshot, l *ledgerpkg.Record, is issues.Issue) burn.Series {
	if l == nil || !l.Baseline {
		return burn.Series{Issue: is.Number, Title: is.Title}
	}
	if s := ledgerpkg.BurnSeries(is.Number, is.Title, l); len(s.Points) > 0 {
		return s
	}
	var rs []burn.Report
	for _, c := range snap.Comments() {
		if !strings.HasPrefix(c.Body, "## 🔄 ") {
			continue
		}
		f, ok := handoff.ParseFooter(c.Body)
		if !ok {
			continue
		}
		b := f.Budget
		if f.Phase != l.Phase || *b.Remaining < l.Remaining || *b.Remaining > l.Total {
			continue
		}
		rs = append(rs, burn.Report{At: c.CreatedAt, Agent: f.Agent, Before: *b.Before, Consumed: l.Total - *b.Remaining, Remaining: *b.Remaining})
	}
	return burn.FromReports(is.Number, is.Title, l.Total, rs)
}

// Series are the burn series of the rows, for burn.RepoChart.
func (r *Result) Series() []burn.Series {
	out := make([]burn.Series, 0, len(r.Rows))
	for _, row := range r.Rows {
		out = append(out, row.burn)
	}
	return out
}

// Failed reports whether any row fails.
func (r *Result) Failed() bool {
	if len(r.DisabledWorkflows) > 0 {
		return true
	}
	for _, row := range r.Rows {
		if row.Verdict == "fail" || row.Unjudged != nil {
			return true
		}
	}
	return false
}
