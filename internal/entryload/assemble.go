package entryload

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gns-guard/gns-guard/internal/markdown"
)

// maxRounds bounds the re-plans after the exact count of a rendered load
// came out over the cap (token counts of parts do not add up exactly).
const maxRounds = 64

// Assemble builds the load: every section whole if it fits, else, from the
// lowest priority up, skills dropped, files cut or dropped, comments
// dropped oldest first. The Text never takes more than Cap - Reserve
// tokens; when the checkpoint alone does not fit, it returns an
// *OverCapError.
func Assemble(in Input) (*Load, error) {
	if err := in.check(); err != nil {
		return nil, err
	}
	a := &assembly{in: &in, target: in.Budget.Cap - in.Reserve, pinned: -1}
	a.build()
	a.header = header(a.in)
	a.headerTokens = a.count(a.header)

	// The smallest load: the checkpoint, everything else dropped.
	a.dropAll()
	minimal, total := a.render()
	if total > a.target {
		return nil, &OverCapError{Issue: in.Issue, Checkpoint: a.count(in.Checkpoint), Task: a.count(in.Task), Minimal: total,
			Budget: in.Budget, Reserve: in.Reserve}
	}
	if a.choosePrevious() {
		a.dropAll()
		minimal, _ = a.render()
	}
	planned := a.planned()
	text, total, err := a.fit(minimal)
	if err != nil {
		return nil, err
	}
	return a.load(text, total, planned), nil
}

// check refuses an input no load can be built from.
func (in *Input) check() error {
	if in.Counter == nil {
		return ErrNoCounter
	}
	switch {
	case in.Budget.Cap <= 0:
		return fmt.Errorf("entryload: the cap must be positive, not %d", in.Budget.Cap)
	case len(in.Files) > MaxFiles:
		return fmt.Errorf("entryload: %d files named; a load holds at most %d", len(in.Files), MaxFiles)
	case strings.TrimSpace(in.Checkpoint) == "":
		return errors.New("entryload: no checkpoint to load")
	}
	return nil
}

// planned is the whole load: header, every section whole, full footer.
func (a *assembly) planned() int {
	planned := a.headerTokens + a.count(a.footerFor(Kept, 0))
	for i := range a.secs {
		planned += a.secs[i].Whole + 1
	}
	return planned
}

// fit plans the load under the cap, narrowing the plan by what each
// render came out over it, and then widens it again (widen). When no plan
// fits within maxRounds, the load is the minimal one.
func (a *assembly) fit(minimal string) (string, int, error) {
	slack := 0
	for range maxRounds {
		a.plan(slack)
		text, total := a.render()
		if total <= a.target {
			text, total = a.widen(slack, text, total)
			return text, total, nil
		}
		slack += total - a.target
	}
	a.dropAll()
	text, total := a.render()
	if text != minimal || total > a.target {
		return "", 0, errors.New("entryload: the load did not settle under the cap") // unreachable: the minimal load fitted
	}
	return text, total, nil
}

// widen gives the sections what the footer, estimated at its longest, did
// not take, while the load still fits: a bisection on the slack between
// what fits (slack, the plan of text) and what was too generous.
func (a *assembly) widen(slack int, text string, total int) (string, int) {
	fits, try := slack, slack-(a.target-total)
	for round := 0; round < 8 && try < fits && total < a.target; round++ {
		keep := a.snapshot()
		a.plan(try)
		t2, n2 := a.render()
		switch {
		case n2 > a.target:
			a.restore(keep)
			try = (try + fits + 1) / 2
		case n2 > total:
			text, total, fits = t2, n2, try
			try -= a.target - total
		default:
			a.restore(keep)
			return text, total
		}
	}
	return text, total
}

// load is the text, its total tokens, and what was dropped or cut.
func (a *assembly) load(text string, total, planned int) *Load {
	in := a.in
	l := &Load{
		Issue: in.Issue, Agent: in.Agent, LoadCap: in.Budget, Tokens: total, Planned: planned,
		Sections: a.secs, Dropped: []string{}, Cut: []string{}, Skipped: in.Skipped, Left: in.Left, Gone: in.Gone, Guard: in.Guard, Text: text,
		reserve: in.Reserve, counter: in.Counter,
	}
	if l.Skipped == nil {
		l.Skipped = []Skipped{}
	}
	if l.Left == nil {
		l.Left = []Left{}
	}
	for _, s := range a.secs {
		name := fmt.Sprintf("P%d %s", s.Priority, s.Title)
		switch s.Status {
		case Dropped:
			l.Dropped = append(l.Dropped, name)
		case Cut:
			l.Cut = append(l.Cut, fmt.Sprintf("%s (%d of %d lines left out)", name, s.LinesLeftOut, s.Lines))
		}
	}
	return l
}

// assembly is one load being built.
type assembly struct {
	in           *Input
	target       int // most tokens the text may take
	secs         []Section
	order        []int // indices of secs in the order they claim the cap
	header       string
	headerTokens int
	p0Tokens     int // the sections never cut, each with its line break
	pinned       int // the previous result, whole and never cut; -1: none
}

func (a *assembly) count(s string) int { return a.in.Counter.Count(s) }

// build returns sections in print order and claim order.
func (a *assembly) build() {
	in := a.in
	add := func(s Section) int {
		a.secs = append(a.secs, s)
		return len(a.secs) - 1
	}
	if strings.TrimSpace(in.Task) != "" {
		task, rs := markdown.Strip(in.Task)
		title := fmt.Sprintf("Task of issue #%d", in.Issue)
		if in.TaskNote != "" {
			title += " (" + in.TaskNote + ")"
		}
		add(Section{Priority: P0, Kind: KindTask, Title: title, body: task, Hidden: hiddenNote(rs)})
	}
	cp, rs := markdown.StripCharacters(in.Checkpoint)
	add(Section{Priority: P0, Kind: KindCheckpoint, Title: fmt.Sprintf("Checkpoint of issue #%d", in.Issue), body: cp, Hidden: hiddenNote(rs)})

	comments := in.Comments
	if len(comments) > RecentComments {
		comments = comments[len(comments)-RecentComments:]
	}
	results := make([]*result, len(comments))
	prev := -1
	for i, c := range comments {
		if r, ok := parseResult(c.Body); ok {
			results[i] = &r
			prev = i
		}
	}
	var p1 = -1
	var p2 []int
	if prev >= 0 {
		p1 = add(a.commentSection(P1, comments[prev], results[prev]))
	}
	for i, c := range comments {
		if i != prev {
			p2 = append(p2, add(a.commentSection(P2, c, results[i])))
		}
	}
	var files []int
	for _, f := range in.Files {
		s := Section{Priority: P3, Kind: KindFile, Source: f.Path, Title: "File " + markdown.OneLine(f.Path, 200), body: f.Text}
		s.lines = strings.SplitAfter(f.Text, "\n")
		if s.lines[len(s.lines)-1] == "" {
			s.lines = s.lines[:len(s.lines)-1]
		}
		s.Lines = len(s.lines)
		files = append(files, add(s))
	}
	skill := -1
	if in.Skill != nil {
		title := "Skill " + markdown.OneLine(in.Skill.Path, 200)
		skill = add(Section{Priority: P4, Kind: KindSkill, Source: in.Skill.Path, Title: title, body: in.Skill.Text})
	}
	for i := range a.secs {
		s := &a.secs[i]
		s.whole = s.render(s.Lines)
		s.Whole = a.count(s.whole)
	}
	for _, s := range a.secs {
		if s.Priority == P0 {
			a.p0Tokens += s.Whole + 1
		}
	}

	if p1 >= 0 {
		a.order = append(a.order, p1)
	}
	for i := len(p2) - 1; i >= 0; i-- { // newest first: the oldest is dropped first
		a.order = append(a.order, p2[i])
	}
	a.order = append(a.order, files...)
	if skill >= 0 {
		a.order = append(a.order, skill)
	}
}

// commentSection compresses agent results to footer fields unless
// FullComments.
func (a *assembly) commentSection(prio int, c Comment, r *result) Section {
	body, rs := markdown.Strip(c.Body)
	s := Section{Priority: prio, Kind: KindComment, CommentID: c.ID, Author: c.Author, Source: strings.TrimSpace(c.URL), body: body,
		unread: c.Unread, Hidden: hiddenNote(rs)}
	by := fmt.Sprintf("comment %d by %s", c.ID, markdown.OneLine(c.Author, 60))
	s.Title = "Comment" + strings.TrimPrefix(by, "comment")
	if r != nil {
		s.Kind = KindResult
		who := markdown.OneLine(r.agent, 60)
		if prio == P1 {
			s.Title = fmt.Sprintf("Previous agent's result: %s, %s", who, by)
		} else {
			s.Title = fmt.Sprintf("Result of %s, %s", who, by)
		}
		s.short = r.compressed(c)
		if prio != P1 && !a.in.FullComments {
			a.compress(&s)
		}
	}
	return s
}

// hiddenNote says what Strip took out of a section that a reader should
// hear of ("" when nothing: the guard's markers and footers are parsed,
// not loaded, and say nothing).
func hiddenNote(rs []markdown.Removal) string { return markdown.Describe(markdown.Suspicious(rs)) }

// compress shows an agent result by its footer's fields.
func (a *assembly) compress(s *Section) {
	s.Compressed, s.Original, s.body = true, a.count(s.body), s.short
}

// choosePrevious settles the previous agent's result: whole when the load
// holding it whole, everything of a lower priority dropped, fits the cap
// (it is then pinned, never dropped), else compressed to fit. The guard's
// figure in the footer is counted at its widest, so that the guard
// (Measure) and `context` decide alike. It reports whether it pinned.
func (a *assembly) choosePrevious() bool {
	i := slices.IndexFunc(a.secs, func(s Section) bool { return s.Priority == P1 && s.Kind == KindResult })
	if i < 0 {
		return false
	}
	s := &a.secs[i]
	limit := a.in.Budget.Cap
	if a.target < limit {
		limit = a.target
	}
	need := a.wholeNeeds(i)
	if limit <= 0 || need <= limit {
		a.pinned = i
		a.p0Tokens += s.Whole + 1
		return true
	}
	a.compress(s)
	s.ToFit, s.wholeCap = true, need
	s.whole = s.render(s.Lines)
	s.Whole = a.count(s.whole)
	return false
}

// wholeNeeds is the load with section i whole and no lower priority.
func (a *assembly) wholeNeeds(i int) int {
	if g := a.in.Guard; g != nil {
		widest := *g
		widest.ContextTokens, widest.NextEstimated, widest.MaxContext = widestFigure, widestFigure, widestFigure
		widest.EntryTokens, widest.CommentTokens = widestFigure, widestFigure
		a.in.Guard = &widest
		defer func() { a.in.Guard = g }()
	}
	a.dropAll()
	s := &a.secs[i]
	s.Status, s.Text, s.Tokens = Kept, s.whole, s.Whole
	_, total := a.render()
	a.dropAll()
	return total
}

// widestFigure sizes the guard's numbers: no real figure is wider.
const widestFigure = 99_999_999

// snapshot and restore save every section's planned state.
func (a *assembly) snapshot() []Section { return append([]Section(nil), a.secs...) }

func (a *assembly) restore(saved []Section) { copy(a.secs, saved) }

// dropAll keeps only checkpoint, task and pinned result.
func (a *assembly) dropAll() {
	for i := range a.secs {
		s := &a.secs[i]
		if s.Priority == P0 || i == a.pinned {
			s.Status, s.Text, s.Tokens = Kept, s.whole, s.Whole
			continue
		}
		s.Status, s.Text, s.Tokens, s.LinesLeftOut = Dropped, "", 0, 0
	}
}

// footerFor is the footer as it would read with every section but the
// checkpoint in status (or the longest status when status is ""), for
// estimating what the footer will take.
func (a *assembly) footerFor(status string, total int) string {
	lines := make([]string, len(a.secs))
	for i := range a.secs {
		s := &a.secs[i]
		switch {
		case s.Priority == P0 || i == a.pinned || status == Kept:
			lines[i] = s.footerLine(Kept, s.Whole, s.Lines)
		case status != "":
			lines[i] = s.footerLine(status, s.Whole, s.Lines)
		default:
			// The longest a line can read, dropped or cut.
			lines[i] = longest(s.footerLine(Kept, s.Whole, s.Lines), s.footerLine(Dropped, 0, 0))
			if s.Kind == KindFile && s.Lines > 1 {
				lines[i] = longest(lines[i], s.footerLine(Cut, s.Whole, s.Lines-1))
			}
		}
	}
	return footer(a.in, max(total, a.in.Budget.Cap), lines)
}

func longest(a, b string) string {
	if len(b) > len(a) {
		return b
	}
	return a
}

// plan decides every section's status within the cap less slack.
func (a *assembly) plan(slack int) {
	a.dropAll()
	left := a.target - slack - a.headerTokens - a.p0Tokens - a.count(a.footerFor("", 0))
	for _, i := range a.order {
		s := &a.secs[i]
		if i == a.pinned {
			continue
		}
		if s.Whole+1 <= left {
			s.Status, s.Text, s.Tokens = Kept, s.whole, s.Whole
			left -= s.Whole + 1
			continue
		}
		if s.Kind != KindFile || s.Lines < 2 {
			continue
		}
		// The most first lines that fit; tokens grow with lines.
		lo, hi, best, bestText, bestTokens := 1, s.Lines-1, 0, "", 0
		for lo <= hi {
			mid := (lo + hi) / 2
			text := s.render(mid)
			if n := a.count(text); n+1 <= left {
				best, bestText, bestTokens = mid, text, n
				lo = mid + 1
			} else {
				hi = mid - 1
			}
		}
		if best > 0 {
			s.Status, s.Text, s.Tokens, s.LinesLeftOut = Cut, bestText, bestTokens, s.Lines-best
			left -= bestTokens + 1
		}
	}
}

// render returns the text and its exact token count, the footer's total.
func (a *assembly) render() (string, int) {
	var body strings.Builder
	body.WriteString(a.header)
	lines := make([]string, len(a.secs))
	for i := range a.secs {
		s := &a.secs[i]
		lines[i] = s.footerLine(s.Status, s.Tokens, s.Lines-s.LinesLeftOut)
		if s.Status != Dropped {
			body.WriteString("\n")
			body.WriteString(s.Text)
		}
	}
	body.WriteString("\n")
	head := body.String()
	// The footer states a total that includes itself: settle it.
	headTokens := a.count(head)
	total := headTokens + a.count(footer(a.in, a.target, lines))
	var text string
	n := 0
	for range 8 {
		text = head + footer(a.in, total, lines)
		if n = a.count(text); n == total {
			break
		}
		total = n
	}
	return text, n
}
