package action

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/guard"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/ledger"
	"github.com/gns-guard/gns-guard/internal/live"
	"github.com/gns-guard/gns-guard/internal/port"
	"github.com/gns-guard/gns-guard/internal/scopes"
	"github.com/gns-guard/gns-guard/internal/secrets"
	"github.com/gns-guard/gns-guard/internal/settings"
	"github.com/gns-guard/gns-guard/internal/tokens"
	"github.com/gns-guard/gns-guard/internal/version"
	"github.com/sethvargo/go-githubactions"
)

// ForgeFunc connects to a server's API for one repository.
type ForgeFunc func(apiURL, token, owner, repo string) (port.Forge, error)

// Options is all action mode reads or writes.
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
// exitcode.ErrViolations when the run fails for violations, and otherwise an
// exitcode.Reported error (already logged) wrapping an exitcode.UsageError (a bad
// input or environment) or an exitcode.CannotRunError (the server could not be
// used): exitcode.Code maps each to the process's exit code.
func Run(ctx context.Context, o Options) error {
	gh := githubactions.New(githubactions.WithGetenv(o.Getenv), githubactions.WithWriter(o.Stdout))
	r := &runner{o: o, kit: &toolkit{gh: gh, getenv: o.Getenv}, log: &logger{w: o.Stdout}}
	r.kit.warn = r.log.infof
	r.log.infof("gns-guard: %s", version.String())
	err := r.run(ctx)
	if err == nil || errors.Is(err, exitcode.ErrViolations) {
		return err
	}
	var ce *exitcode.CannotRunError
	if !errors.As(err, &ce) {
		var ue *exitcode.UsageError
		if !errors.As(err, &ue) {
			err = &exitcode.UsageError{Err: err}
		}
	}
	r.log.untrusted("gns-guard: " + err.Error())
	r.kit.output("result", "error")
	return &exitcode.Reported{Err: err}
}

// mask masks every token and key of the run, a key refused as too weak
// included (its input's own text), and keeps them as the secrets no write
// of the run may carry.
func (r *runner) mask(set settings.Resolved, input func(string) string) {
	masked := map[string]bool{"": true}
	r.held = nil
	for _, s := range []secrets.Secret{{Name: "the token input", Value: set.Token}, {Name: "the admin-token input", Value: set.AdminToken},
		{Name: "the Actions token", Value: r.o.Getenv(ActionsTokenEnv)}, {Name: "ledger-key", Value: string(set.Config.LedgerKey)},
		{Name: "ledger-key-previous", Value: string(set.Config.LedgerKeyPrevious)}, {Name: "ledger-key", Value: strings.TrimSpace(input("ledger-key"))},
		{Name: "ledger-key-previous", Value: strings.TrimSpace(input("ledger-key-previous"))}, {Name: "GITEA_TOKEN", Value: r.o.Getenv("GITEA_TOKEN")},
		{Name: "GITHUB_TOKEN", Value: r.o.Getenv("GITHUB_TOKEN")}} {
		if !masked[s.Value] {
			masked[s.Value] = true
			r.kit.gh.AddMask(s.Value)
			r.held = append(r.held, s)
		}
	}
}

// hold refuses writes carrying a run secret
// (docs/ledger.md#no-secret-in-a-write).
func (r *runner) hold(f port.Forge) { f.HoldSecrets(r.held...) }

// cannotRun marks err exit 3.
func cannotRun(err error) error { return &exitcode.CannotRunError{Err: err} }

// runner is one run of action mode.
type runner struct {
	o   Options
	kit *toolkit
	log *logger

	inputs settings.Layer
	set    settings.Resolved
	cfg    config.Config
	stamp  *ledger.ConfigStamp
	// pullSettings is why the pull request's settings do not load; "" if
	// fine.
	pullSettings string
	// posture is set once postureDone; nil: not judged.
	posture     *ledger.PostureStamp
	postureDone bool
	event       issues.Event
	forge       port.Forge
	admin       port.Forge // admin-token's client; the token's when none is set
	reader      *live.Reader
	repo        string // OWNER/NAME
	counter     *tokens.Counter
	notes       []string           // facts of the run for the status comment, beyond applying the plan
	held        []secrets.Secret   // the run's tokens and keys: no write carries one
	grants      *ledger.GrantState // the repository's grant list as last read (nil: not yet)
	pins        *ledger.PinState   // the repository's label pins as handed over (nil: not yet)
	// grantsFresh says grants was read anew with admin-token by this run,
	// just before its write: only such a list is merged and written.
	grantsFresh bool
	// token is the token input, else the Actions token.
	token string
	// metered is read once from meter-url; nil: not yet.
	metered *guard.MeterRead
	// readAt is the server's time when the attempt read the issue: the
	// record keeps it, and a label changed after it is the next run's.
	readAt time.Time
}

func (r *runner) run(ctx context.Context) error {
	input := func(name string) string { return r.kit.gh.GetInput(name) }
	r.inputs = settings.InputLayer(input)
	set, err := settings.Resolve(r.inputs)
	r.mask(set, input)
	if err != nil {
		return &exitcode.UsageError{Err: err}
	}
	if k := set.Config.LedgerKeyPrevious; len(k) > 0 && ledger.CheckKey(k) != nil {
		r.log.infof("gns-guard: warning: input ledger-key-previous is weaker than %d bits: it still verifies the records it signed, "+
			"which this run signs anew with ledger-key; remove it once every issue's ledger is signed with the new key", ledger.MinKeyBits)
	}
	// An empty token input (a workflow that names a secret not set, such
	// as GNS_GUARD_TOKEN) falls back to the Actions token action.yml hands
	// the step.
	token := firstNonEmpty(set.Token, r.o.Getenv("GITEA_TOKEN"), r.o.Getenv("GITHUB_TOKEN"), r.o.Getenv(ActionsTokenEnv))
	if token == "" {
		return &exitcode.UsageError{Err: errors.New("input token: expected a token (the default is ${{ github.token }})")}
	}
	apiURL, owner, name, err := r.readEnvironment()
	if err != nil {
		return err
	}
	if set.Mode == "dashboard" {
		return r.dashboard(ctx, apiURL, token, owner, name, set)
	}
	if set.IssueNumber > 0 {
		r.event.Number = set.IssueNumber
	}
	if ok, why := r.event.Supported(); !ok {
		r.log.infof("gns-guard: nothing to do: %s", why)
		r.kit.output("result", "skipped")
		return nil
	}
	if r.forge, err = r.o.NewForge(apiURL, token, owner, name); err != nil {
		return err
	}
	r.token = token
	r.hold(r.forge)
	r.admin = r.forge
	r.reader = &live.Reader{
		Forge:        r.forge,
		Admin:        r.forge,
		Where:        guardWhere(apiURL, r.repo),
		TokenIsGuard: true,
		Keys:         ledger.ConfigKeys(set.Config),
	}
	r.reader.Anchors.Handed = r.o.Getenv(AnchorEnv)
	if set.AdminToken != "" {
		if r.admin, err = r.o.NewForge(apiURL, set.AdminToken, owner, name); err != nil {
			return err
		}
		r.hold(r.admin)
		r.reader.Admin, r.reader.Anchors.Store = r.admin, r.admin
	}
	if t := r.o.Getenv(ActionsTokenEnv); t != "" && t == token {
		r.reader.Guard = issues.ActionsUser
	}
	r.set, r.cfg = set, set.Config
	return r.cycle(ctx)
}

// guardWhere says, in the messages of a failed request, that the token
// input is the guard's own account's token (GNS_GUARD_TOKEN) and what it
// needs.
func guardWhere(apiURL, repo string) live.Where {
	return live.Where{Server: apiURL, Repo: repo, TokenHint: "check the token input", Token: "the token input", Needs: scopes.Guard.Needs()}
}

// configure resolves the run's configuration once the issue is read: the
// repository's configuration file (or the ledger's record of it at this
// commit) under the inputs, and the tokenizer it names.
func (r *runner) configure(ctx context.Context, s *live.Snapshot) error {
	set, stamp, err := r.reader.Config(ctx, s, live.ConfigOptions{Commit: r.o.Getenv("GITHUB_SHA"), Top: []settings.Layer{r.inputs}})
	if err != nil {
		return err
	}
	return r.use(set, stamp)
}

// use makes set the run's configuration (stamp: the file as read, nil for
// none to record), with the keys and the tokenizer it names.
func (r *runner) use(set settings.Resolved, stamp *ledger.ConfigStamp) error {
	var err error
	r.set, r.cfg, r.stamp = set, set.Config, stamp
	r.reader.Keys = ledger.ConfigKeys(r.cfg) // the file may publish ledger-public-key
	if r.counter == nil || r.counter.Encoding() != r.cfg.Encoding {
		if r.counter, err = tokens.New(r.cfg.Encoding); err != nil {
			return cannotRun(err)
		}
	}
	return nil
}

// readEnvironment reads the repository, the API URL and the event.
func (r *runner) readEnvironment() (apiURL, owner, name string, err error) {
	getenv := r.o.Getenv
	repo := getenv("GITHUB_REPOSITORY")
	owner, name, ok := strings.Cut(repo, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return "", "", "", fmt.Errorf("GITHUB_REPOSITORY must be OWNER/NAME, got %q", repo)
	}
	r.repo = repo
	api := getenv("GITHUB_API_URL")
	if api == "" {
		server := strings.TrimRight(getenv("GITHUB_SERVER_URL"), "/")
		if server == "" {
			return "", "", "", errors.New("neither GITHUB_API_URL nor GITHUB_SERVER_URL is set: the guard does not know which server to ask")
		}
		api = server + "/api/v1"
	}
	if u, err := url.Parse(api); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", "", "", fmt.Errorf("the API URL %q is not an http(s) URL", api)
	}
	evName := getenv("GITHUB_EVENT_NAME")
	path := getenv("GITHUB_EVENT_PATH")
	if evName == "" || path == "" {
		return "", "", "", errors.New("GITHUB_EVENT_NAME and GITHUB_EVENT_PATH must be set: action mode runs inside a workflow (use " +
			"'gns-guard check' on a file instead)")
	}
	data, err := r.eventPayload(path)
	if err != nil {
		return "", "", "", fmt.Errorf("cannot read the event payload: %w", err)
	}
	ev, err := issues.ParseEvent(evName, data)
	if err != nil {
		return "", "", "", err
	}
	if n, err := strconv.Atoi(getenv(RunAttemptEnv)); err == nil {
		ev.Attempt = n
	}
	r.event = ev
	return api, owner, name, nil
}

// AnchorEnv is set by action.yml to the event's issue number, a colon and
// the value of that issue's anchor variable (docs/ledger.md): the runner
// reads repository variables when it picks the job up, so the anchor costs
// the step no request.
const AnchorEnv = "GNS_GUARD_ANCHOR"

// ActionsTokenEnv is github.token: a token input equal to it has a known
// user.
const ActionsTokenEnv = "GNS_GUARD_ACTIONS_TOKEN"

func firstNonEmpty(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}
