package cli

import (
	"time"

	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/settings"
	"github.com/gns-guard/gns-guard/internal/testkit/fakeforge"
)

// agreeClock is the server's and the commands' clock: fixed, moved on by
// the test a minute at a time, so every timestamp is deterministic.
type agreeClock struct{ t time.Time }

func (c *agreeClock) now() time.Time { return c.t }

// tick moves the clock on by a minute.
func (c *agreeClock) tick() { c.t = c.t.Add(time.Minute) }

// agreeServer is the scenario's repository on the fake Gitea, and its
// one issue.
type agreeServer struct {
	*fakeforge.Server
	number int64
}

// newAgreeServer serves issue number with body and labels (created with
// the issue: the timeline holds no event for them), and the configuration
// file config (nil: none), on clock. The agent and the opener write.
func newAgreeServer(clock *agreeClock, number int64, body string, labels []string, config []byte) *agreeServer {
	s := fakeforge.New(agreeRepo)
	s.Now = clock.now
	s.Grant(agreeAgent, "write")
	s.Grant(agreeOpener, "write")
	is := issues.Issue{Number: number, Title: "agreement", Body: body, ContentVersion: 0} // as Gitea opens an issue
	for _, name := range labels {
		is.Labels = append(is.Labels, issues.Label{Name: name})
	}
	s.AddIssue(is, agreeOpener)
	if config != nil {
		s.Files("")[settings.FileName] = config
	}
	return &agreeServer{Server: s, number: number}
}

// issue is the scenario's issue as the server holds it now.
func (s *agreeServer) issue() issues.Issue { return s.Issue(s.number) }

// writes counts the writes made, by any client.
func (s *agreeServer) writes() int { return len(s.Writes()) }
