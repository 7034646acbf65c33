package agentwrite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/gns-guard/gns-guard/internal/finding"
	"github.com/gns-guard/gns-guard/internal/handoff"
	"github.com/gns-guard/gns-guard/internal/scopes"
)

// CheckDone checks what the agent says it did: who, how many tokens,
// what, and how it ended. The usage errors name report's flags.
func (req ReportRequest) CheckDone() error {
	r := req.Report
	switch {
	case r.Agent == "":
		return usageError("report: --agent NAME is required")
	case !handoff.ValidName(r.Agent):
		return usageError("report: --agent %q: an agent's name has no spaces or | (it stands in the comment's header)", r.Agent)
	case r.Consumed < 0:
		return usageError("report: --consumed TOKENS (a whole number >= 0) is required")
	case strings.TrimSpace(r.Action) == "":
		return usageError("report: --action TEXT is required: it says what the agent did")
	case r.Status != "ok" && r.Status != "failed":
		return usageError("report: --status must be ok or failed, not %q", r.Status)
	case r.FilesChanged < 0:
		return usageError("report: --files-changed must be >= 0")
	}
	return nil
}

// CheckNames checks the names the header holds: the next agent's and the
// phase.
func (req ReportRequest) CheckNames() error {
	r := req.Report
	switch {
	case r.NextAgent != "" && !handoff.ValidName(r.NextAgent):
		return usageError("report: --next-agent %q: an agent's name has no spaces or |", r.NextAgent)
	case r.Phase != "" && !handoff.ValidName(r.Phase):
		return usageError("report: --phase %q: a phase has no spaces or | (it stands in the comment's header)", r.Phase)
	}
	return nil
}

// WriteUnreadable writes, a line each, the findings that made issue n's
// checkpoint unreadable when err says so.
func WriteUnreadable(w io.Writer, err error, n int64) {
	var ue *handoff.UnreadableError
	if errors.As(err, &ue) {
		for _, fd := range ue.Findings {
			fmt.Fprintln(w, fd.Format(fmt.Sprintf("issue#%d", n)))
		}
	}
}

// Nothing is the result of a recovery with nothing to recover: issue n's
// checkpoint is valid.
func Nothing(n int64) RecoverResult { return RecoverResult{Issue: n, Findings: []finding.Finding{}} }

// Approve looks up the token's user as the author of a recovery it
// applies, and makes sure it may write (MayRecover).
func (c *Conn) Approve(ctx context.Context, admins []string) error {
	// --apply needs the token's user (read:user) as well as write:issue.
	c.Reader.Where.Scopes = scopes.Join(scopes.WithFlag("recover"))
	self, err := c.Client.Self(ctx)
	if err != nil {
		return c.Reader.Where.Error("look up the token's user", err)
	}
	c.Self = self
	return MayRecover(ctx, c.Reader, self, admins)
}
