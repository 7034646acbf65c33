package action

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/gns-guard/gns-guard/internal/exit"
	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/tokens"
	"github.com/sethvargo/go-githubactions"
)

// ForgeFunc connects to a server's API for one repository.
type ForgeFunc func(apiURL, token, owner, repo string) (guard.Forge, error)

// Options is the world action mode runs in. Nothing else is read or written.
type Options struct {
	Getenv   func(string) string
	Stdout   io.Writer
	Stderr   io.Writer
	ReadFile func(string) ([]byte, error)
	// AppendFile appends data to a file, creating it (metrics-file).
	AppendFile func(name string, data []byte) error
	// NewForge connects to the server.
	NewForge ForgeFunc
	// Now reads the clock.
	Now func() time.Time
}

// Run runs action mode. It returns nil for a clean run (or nothing to do),
// exit.ErrViolations when the run fails for violations, and otherwise an
// exit.Reported error (already logged) wrapping an exit.UsageError (a bad
// input or environment) or an exit.CannotRunError (the server could not be
// used): exit.Code maps each to the process's exit code.
func Run(ctx context.Context, o Options) error {
	gh := githubactions.New(githubactions.WithGetenv(o.Getenv), githubactions.WithWriter(o.Stdout))
	r := &runner{o: o, gh: gh, log: &logger{gh: gh, w: o.Stdout}}
	err := r.run(ctx)
	if err == nil || errors.Is(err, exit.ErrViolations) {
		return err
	}
	var ce *exit.CannotRunError
	if !errors.As(err, &ce) {
		err = &exit.UsageError{Err: err}
	}
	r.log.untrusted("gns-guard: " + err.Error())
	gh.SetOutput("result", "error")
	return &exit.Reported{Err: err}
}

// cannotRun marks err as a failure to do the work at all (exit 3).
func cannotRun(err error) error { return &exit.CannotRunError{Err: err} }

// runner is one run of action mode.
type runner struct {
	o   Options
	gh  *githubactions.Action
	log *logger

	set     Settings
	event   guard.Event
	forge   guard.Forge
	admin   guard.Forge
	owner   string
	repo    string
	apiURL  string
	self    string
	counter *tokens.Counter
	notes   []string // facts of the run for the status comment, beyond applying the plan
}

func (r *runner) run(ctx context.Context) error {
	set, err := readSettings(r.gh.GetInput)
	if err != nil {
		return err
	}
	r.set = set
	if set.Token == "" {
		set.Token = firstNonEmpty(r.o.Getenv("GITEA_TOKEN"), r.o.Getenv("GITHUB_TOKEN"))
		r.set.Token = set.Token
	}
	for _, t := range []string{set.Token, set.AdminToken, r.o.Getenv(ActionsTokenEnv), string(set.Config.LedgerKey)} {
		if t != "" {
			r.gh.AddMask(t)
		}
	}
	if set.Token == "" {
		return &InputError{"token", "", "expected a token (the default is ${{ github.token }})"}
	}
	if err := r.readEnvironment(); err != nil {
		return err
	}
	if ok, why := r.event.Supported(); !ok {
		r.log.infof("gns-guard: nothing to do: %s", why)
		r.gh.SetOutput("result", "skipped")
		return nil
	}
	counter, err := tokens.New(set.Config.Encoding)
	if err != nil {
		return cannotRun(err)
	}
	r.counter = counter
	if r.forge, err = r.o.NewForge(r.apiURL, set.Token, r.owner, r.repo); err != nil {
		return err
	}
	r.admin = r.forge
	if set.AdminToken != "" {
		if r.admin, err = r.o.NewForge(r.apiURL, set.AdminToken, r.owner, r.repo); err != nil {
			return err
		}
	}
	if r.o.Getenv(ActionsTokenEnv) != "" && r.o.Getenv(ActionsTokenEnv) == set.Token {
		r.self = guard.ActionsUser
	}
	return r.cycle(ctx)
}

// readEnvironment reads the repository, the API URL and the event.
func (r *runner) readEnvironment() error {
	getenv := r.o.Getenv
	repo := getenv("GITHUB_REPOSITORY")
	owner, name, ok := strings.Cut(repo, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return fmt.Errorf("GITHUB_REPOSITORY must be OWNER/NAME, got %q", repo)
	}
	r.owner, r.repo = owner, name
	api := getenv("GITHUB_API_URL")
	if api == "" {
		server := strings.TrimRight(getenv("GITHUB_SERVER_URL"), "/")
		if server == "" {
			return errors.New("neither GITHUB_API_URL nor GITHUB_SERVER_URL is set: the guard does not know which server to ask")
		}
		api = server + "/api/v1"
	}
	if u, err := url.Parse(api); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("the API URL %q is not an http(s) URL", api)
	}
	r.apiURL = api
	name = getenv("GITHUB_EVENT_NAME")
	path := getenv("GITHUB_EVENT_PATH")
	if name == "" || path == "" {
		return errors.New("GITHUB_EVENT_NAME and GITHUB_EVENT_PATH must be set: action mode runs inside a workflow (use 'gns-guard check' on a file instead)")
	}
	data, err := r.o.ReadFile(path)
	if err != nil {
		return fmt.Errorf("cannot read the event payload: %w", err)
	}
	ev, err := guard.ParseEvent(name, data)
	if err != nil {
		return err
	}
	r.event = ev
	return nil
}

// ActionsTokenEnv is set by action.yml to ${{ github.token }}: the token
// input equal to it is the Actions token, whose user is known.
const ActionsTokenEnv = "GNS_GUARD_ACTIONS_TOKEN"

// learnSelf learns the guard's own login, when the Actions token did not
// tell it, at the cost of no request where it can: the author of a status
// comment whose ledger record verifies under ledger-key and names that
// author as its writer is the guard's user (no one else can sign, and a
// copy in someone else's comment names another writer). Otherwise one
// GET /user. A token merely exported as GITEA_TOKEN or GITHUB_TOKEN proves
// nothing: only action.yml's GNS_GUARD_ACTIONS_TOKEN names the Actions
// token.
func (r *runner) learnSelf(ctx context.Context, s snapshot) error {
	if r.self != "" {
		return nil
	}
	if key := r.set.Config.LedgerKey; len(key) > 0 {
		marker := guard.StatusMarker(s.issue.Number)
		for i := len(s.recent.Comments) - 1; i >= 0; i-- {
			c := s.recent.Comments[i]
			if !strings.Contains(c.Body, marker) {
				continue
			}
			if l, _ := guard.ReadLedger(&c, s.issue.Number, key); l != nil && l.Writer != "" && l.Writer == c.Author {
				r.self = c.Author
				return nil
			}
		}
	}
	self, err := r.forge.Self(ctx)
	if err != nil {
		return r.forgeError("look up the token's user", err)
	}
	r.self = self
	return nil
}

// ownEvent reports whether the event was caused by the guard's own user
// with a personal token (its writes with the Actions token start no runs).
func (r *runner) ownEvent() bool {
	return r.event.Sender != "" && r.event.Sender == r.self && r.self != guard.ActionsUser
}

// forgeError classifies a failed request: a rejected token or an
// unreachable server cannot be worked around (exit 3).
func (r *runner) forgeError(what string, err error) error {
	switch {
	case errors.Is(err, guard.ErrForbidden):
		return cannotRun(fmt.Errorf("could not %s: the token was refused (%w); give it issue write access", what, err))
	case errors.Is(err, guard.ErrNotFound):
		return cannotRun(fmt.Errorf("could not %s in %s/%s: %w", what, r.owner, r.repo, err))
	}
	return cannotRun(fmt.Errorf("could not %s at %s: %w", what, r.apiURL, err))
}

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}
