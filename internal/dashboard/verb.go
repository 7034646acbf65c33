package dashboard

import (
	"fmt"
	"io"
	"time"

	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/fence"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/live"
	"github.com/gns-guard/gns-guard/internal/markdown"
	"github.com/gns-guard/gns-guard/internal/port"
)

// NewSweep is `status`'s sweep of the reader's repository through client,
// which skips the dashboard issue (written by login).
func NewSweep(rd *live.Reader, client port.Forge, cfg config.Config, repo, login string, now func() time.Time) *Sweep {
	return &Sweep{
		Reader: rd, Lister: client, Config: cfg, Repo: repo, Now: now, ServerNow: client.ServerTime, Workflows: client,
		Skip: func(is issues.Issue, author string) bool { return IsDashboard(is, author, login) },
	}
}

// Progress writes a sweep's progress on one line of w once it reads more
// than after governed issues.
func Progress(w io.Writer, after int) func(done, total int) {
	return func(done, total int) {
		if total > after {
			fmt.Fprintf(w, "\rgns-guard: status: read %d of %s", done, markdown.Plural(total, "governed issue"))
			if done == total {
				fmt.Fprintln(w)
			}
		}
	}
}

// Render is the sweep in format: json, markdown or text. Fenced puts the
// text and Markdown forms, which hold issue titles, between
// stop-commands markers (inside Gitea Actions).
func Render(res *Result, format string, fenced bool) ([]byte, error) {
	var out string
	switch format {
	case "json":
		return JSON(res)
	case "markdown":
		out = Markdown(res)
	default:
		out = Text(res)
	}
	if fenced {
		fc := fence.New()
		out = fc.Open() + out + fc.Close()
	}
	return []byte(out), nil
}
