package checkpoint

import (
	"fmt"
	"strings"

	"github.com/gns-guard/gns-guard/internal/finding"
)

// Options tune Parse. The zero value uses the defaults.
type Options struct {
	// Issue must match checkpoint.issue; 0 skips the check.
	Issue int64
	// MaxBytes caps the block before parsing (default 64 KiB).
	MaxBytes int
	// TailLimit is history-tail (default 3); history_tail may hold
	// TailMost(TailLimit).
	TailLimit int
	// Done closes at the caller's deadline (see ParseTimeout); nil: no
	// limit.
	Done <-chan struct{}
}

func (o Options) maxBytes() int {
	if o.MaxBytes > 0 {
		return o.MaxBytes
	}
	return DefaultMaxBytes
}

func (o Options) tailLimit() int {
	if o.TailLimit > 0 {
		return o.TailLimit
	}
	return DefaultTailLimit
}

// Result is what Parse found in a body.
type Result struct {
	// Blocks are the checkpoint blocks found, in order.
	Blocks []Block
	// Checkpoint is set for exactly one readable block, findings or not.
	Checkpoint *Checkpoint
	// Findings are every problem found, sorted by position.
	Findings []finding.Finding
}

// Block is nil for none or several.
func (r Result) Block() *Block {
	if len(r.Blocks) != 1 {
		return nil
	}
	return &r.Blocks[0]
}

// Valid: exactly one checkpoint, free of checkpoint-invalid, -ambiguous and
// -too-large.
func (r Result) Valid() bool {
	if r.Checkpoint == nil || len(r.Blocks) != 1 {
		return false
	}
	for _, f := range r.Findings {
		switch f.Rule {
		case RuleInvalid, RuleAmbiguous, RuleTooLarge:
			return false
		}
	}
	return true
}

// Find returns the checkpoint blocks of a body: its fenced yaml/yml blocks
// that have a top-level checkpoint key. A body with no fenced block at all
// whose own top level has a checkpoint key is a bare checkpoint, and is
// returned as one block spanning the whole text.
func Find(body string, maxBytes int) []Block {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	all := YAMLBlocks(body)
	var out []Block
	for _, b := range all {
		if isCheckpoint(head(b, maxBytes)) {
			out = append(out, b)
		}
	}
	if len(all) == 0 && !hasFence(body) && isCheckpoint(body) {
		out = append(out, bareBlock(body))
	}
	return out
}

// head is enough to recognise a block without reading it whole.
func head(b Block, maxBytes int) string {
	if b.ContentEnd-b.ContentStart > maxBytes {
		return Block{body: b.body[:b.ContentStart+maxBytes], ContentStart: b.ContentStart, ContentEnd: b.ContentStart + maxBytes,
			strip: b.strip, Indent: b.Indent}.Content()
	}
	return b.Content()
}

func bareBlock(body string) Block {
	b := Block{ContentEnd: len(body), End: len(body), Line: 1, Closed: true, Newline: "\n", body: body}
	if strings.Contains(body, "\r\n") {
		b.Newline = "\r\n"
	}
	b.strip = make([]int, len(splitLines(body)))
	return b
}

// hasFence reports whether any line opens a fenced code block.
func hasFence(body string) bool {
	for _, l := range splitLines(body) {
		if openFence.MatchString(strings.TrimSuffix(l.text, "\r")) {
			return true
		}
	}
	return false
}

// Parse checks against schema v2. It never fails: every problem is a
// finding.
func Parse(body string, opts Options) Result {
	r := Result{Blocks: Find(body, opts.maxBytes())}
	switch len(r.Blocks) {
	case 0:
		return r
	case 1:
	default:
		for i, b := range r.Blocks {
			r.Findings = append(r.Findings, finding.Finding{
				Rule:     RuleAmbiguous,
				Severity: finding.Error,
				Line:     max(1, b.Line-1),
				Col:      b.Indent + 1,
				Message: fmt.Sprintf("checkpoint block %d of %d: an issue body must hold exactly one checkpoint block; merge them or remove "+
					"the stale ones", i+1, len(r.Blocks)),
			})
		}
		return r
	}
	b := r.Blocks[0]
	if size := b.ContentEnd - b.ContentStart; size > opts.maxBytes() {
		r.Findings = append(r.Findings, finding.Finding{
			Rule:     RuleTooLarge,
			Severity: finding.Error,
			KeyPath:  "checkpoint",
			Line:     max(1, b.Line-1),
			Col:      b.Indent + 1,
			Message: fmt.Sprintf("the checkpoint block is %d bytes, over the limit of %d (max-checkpoint-bytes); it was not parsed: move "+
				"history into an archive comment", size, opts.maxBytes()),
		})
		return r
	}
	cp, fs := decodeBlock(b, opts.Done)
	r.Checkpoint = cp
	r.Findings = append(r.Findings, fs...)
	if cp != nil {
		r.Findings = append(r.Findings, Validate(cp, opts)...)
	}
	r.Findings = finding.Sort(r.Findings)
	return r
}
