package cli

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/live"
	"github.com/gns-guard/gns-guard/internal/port"
	"github.com/gns-guard/gns-guard/internal/scopes"
	"github.com/gns-guard/gns-guard/internal/settings"
	"github.com/gns-guard/gns-guard/internal/version"
)

// The files `init` writes. template/workflow.yml and workflow-host.yml
// are copies of examples/workflows/gns-guard.yml and gns-guard-host.yml
// (go:embed cannot reach outside the package); a test keeps them the same.
var (
	//go:embed template/workflow.yml
	workflowTemplate []byte
	//go:embed template/workflow-host.yml
	hostWorkflowTemplate []byte
	//go:embed template/config.yml
	configTemplate []byte
	//go:embed template/gns-task.md
	issueTemplate []byte
)

// Where `init` writes.
const (
	// InitBranch is the branch `init` proposes its files on.
	InitBranch = "gns-guard-init"
	// WorkflowPath is the guard's workflow.
	WorkflowPath = ".gitea/workflows/gns-guard.yml"
	// IssueTemplatePath is the issue template of a governed task.
	IssueTemplatePath = ".gitea/ISSUE_TEMPLATE/gns-task.md"
	// issueTemplateName is the template's name, as Gitea lists it.
	issueTemplateName = "GNS task"
)

// initFile is a file `init` writes.
type initFile struct {
	path    string
	content []byte
	what    string
}

// The runners `init --runner` writes a workflow for.
const (
	// RunnerDocker: the step uses the action, whose image needs a Docker
	// engine.
	RunnerDocker = "docker"
	// RunnerHost: the step runs the gns-guard binary installed on a
	// host-mode runner.
	RunnerHost = "host"
)

// workflowFor is the guard's workflow for a runner.
func workflowFor(runner string) []byte {
	if runner == RunnerHost {
		return pinned(hostWorkflowTemplate, selfDigest())
	}
	return workflowTemplate
}

// initFiles are the files `init` writes for a runner and an agents map
// (--agents NAME=LOGIN), in the order it lists them.
func initFiles(runner string, agents map[string][]string) []initFile {
	what := "the workflow that runs the guard on issue, comment and pull request events"
	if runner == RunnerHost {
		what += ", with the gns-guard binary of a runner without Docker"
	}
	return []initFile{
		{WorkflowPath, workflowFor(runner), what},
		{settings.FileName, configFor(agents), "the guard's settings, read from the default branch"},
		{IssueTemplatePath, issueTemplate, `the "` + issueTemplateName + `" issue template: a governed task with its checkpoint to fill in`},
	}
}

// configFor is the settings file init writes: the template, and the
// agents map when --agents gives one.
func configFor(agents map[string][]string) []byte {
	if len(agents) == 0 {
		return configTemplate
	}
	var b bytes.Buffer
	b.Write(configTemplate)
	b.WriteString("\n# The agents and the Gitea accounts that may speak as them: a result\n# comment counts as an agent's only when one of its accounts posted it\n# (gns-guard init --agents NAME=LOGIN wrote this).\nagents:\n")
	for _, name := range slices.Sorted(maps.Keys(agents)) {
		key := name
		if !plainYAML.MatchString(name) {
			key = strconv.Quote(name)
		}
		fmt.Fprintf(&b, "  %s: [%s]\n", key, strings.Join(agents[name], ", "))
	}
	return b.Bytes()
}

// plainYAML is a name YAML reads as the same text unquoted.
var plainYAML = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]*$`)

// InitLabels are the governance labels `init` creates
// (config.GovernanceSpecs).
func InitLabels() []issues.LabelSpec { return config.GovernanceSpecs(config.DefaultLabels()) }

// setupForge is what `init` needs of the server: the repository set up,
// and the posture it builds.
type setupForge interface {
	port.Setup
	port.PostureSetup
}

// States of a file, a label and the pull request in an initReport.
const (
	// stateCreate: written by this run, or planned by a dry run.
	stateCreate = "create"
	// statePresent: already there as wanted; left as it is.
	statePresent = "present"
	// stateDiffers: a file already there with other content; left as it is.
	stateDiffers = "differs"
)

// initReport is what `init` did, or would do in a dry run: the JSON form,
// and what the text form prints.
type initReport struct {
	Repo          string `json:"repo"`
	Server        string `json:"server"`
	DefaultBranch string `json:"default_branch"`
	// Mode is pull-request or commit (--commit).
	Mode string `json:"mode"`
	// Runner is the runner the workflow is for: docker or host (--runner).
	Runner string `json:"runner"`
	DryRun bool   `json:"dry_run"`
	// Changed says a write was made (or, in a dry run, is planned).
	Changed bool              `json:"changed"`
	Files   []initFileState   `json:"files"`
	Commit  *initCommit       `json:"commit,omitempty"`
	Pull    *initPull         `json:"pull_request,omitempty"`
	Labels  []initLabelState  `json:"labels"`
	Writes  []string          `json:"writes"`
	Notes   []string          `json:"notes,omitempty"`
	Posture []initPostureStep `json:"posture,omitempty"`
	Next    []string          `json:"next_steps"`
	// Done are the next steps found done already.
	Done  []string          `json:"done"`
	base  string            // the default branch's page, for next steps
	files map[string][]byte // path → content, of the files to commit
	// secrets are the names of the repository's secrets (nil: not read);
	// publicKey says the settings file on the default branch publishes
	// ledger-public-key.
	secrets   []string
	publicKey bool
	// agents is the agents map the settings file gets (--agents).
	agents map[string][]string
}

type initFileState struct {
	Path string `json:"path"`
	// State is create, present or differs, on Branch.
	State  string `json:"state"`
	Branch string `json:"branch"`
}

type initCommit struct {
	Branch    string   `json:"branch"`
	NewBranch bool     `json:"new_branch"`
	From      string   `json:"from,omitempty"`
	Files     []string `json:"files"`
	SHA       string   `json:"sha,omitempty"`
}

type initPull struct {
	// State is create (opened by this run, or planned) or present (already open).
	State  string `json:"state"`
	Number int64  `json:"number,omitempty"`
	URL    string `json:"url,omitempty"`
	Head   string `json:"head"`
	Base   string `json:"base"`
}

type initLabelState struct {
	Name        string `json:"name"`
	Color       string `json:"color"`
	Description string `json:"description"`
	// State is create or present (as found: its color and description).
	State string `json:"state"`
}

// maxSetupFile bounds what `init` reads of a file it would write: anything
// longer is not its own file.
const maxSetupFile = settings.MaxFileBytes

// initOptions are the parsed flags of `init`.
type initOptions struct {
	issueFlags
	commit bool
	dryRun bool
	format string
	agents string
	runner string
	// logins are the accounts --agents names, for the team; mapped are
	// its NAME=LOGIN items, for the agents setting.
	logins []string
	mapped map[string][]string
}

// initFlags declares the flags of `init`.
func initFlags(fs *flag.FlagSet) options {
	o := &initOptions{}
	fs.StringVar(&o.repo, "repo", "", "the repository, `OWNER/NAME`")
	fs.StringVar(&o.server, "server", "", "the Gitea server's `URL` (default: $GITHUB_SERVER_URL)")
	fs.StringVar(&o.token, "token", "", "an access `TOKEN` with write access to the repository (default: $GITEA_TOKEN, then $GITHUB_TOKEN)")
	fs.BoolVar(&o.commit, "commit", false, "write the files straight onto the default branch instead of proposing them in a pull request from "+InitBranch)
	fs.BoolVar(&o.dryRun, "dry-run", false, "print every write init would make, and make none")
	fs.StringVar(&o.format, "format", "text", "output format: `text|json`")
	fs.StringVar(&o.agents, "agents", "", "the agents' accounts (and the guard's own) to put in the organisation team "+AgentsTeam+", comma-separated: `LOGIN|NAME=LOGIN,...`, where NAME=LOGIN also lets LOGIN speak as agent NAME (the agents setting of the file init writes)")
	fs.StringVar(&o.runner, "runner", RunnerDocker, "the workflow's runner: `docker|host`; docker uses the action's image, host runs the gns-guard binary installed on a runner without Docker (docs/operations.md#the-runner)")
	return o
}

func (o *initOptions) validate(_ *flag.FlagSet, pos []string, _ Env) error {
	if o.runner != RunnerDocker && o.runner != RunnerHost {
		return usageError("init: --runner must be docker or host, not %q", o.runner)
	}
	if err := o.parseAgents(); err != nil {
		return err
	}
	return o.validateRepoVerb("init", o.format, pos)
}

// parseAgents reads --agents: LOGIN items for the team, NAME=LOGIN items
// for the team and the agents map.
func (o *initOptions) parseAgents() error {
	var pairs []string
	for _, item := range splitList(o.agents) {
		_, login, ok := strings.Cut(item, "=")
		if ok {
			pairs = append(pairs, item)
		} else {
			login = item
		}
		if login = strings.TrimSpace(login); !slices.Contains(o.logins, login) {
			o.logins = append(o.logins, login)
		}
	}
	m, err := settings.ParseAgents(pairs)
	if err != nil {
		return usageError("init: --agents: %v", err)
	}
	o.mapped = m
	return nil
}

// runInit sets a repository up for the guard.
func runInit(ctx context.Context, o *initOptions, env Env) error {
	reader, client, err := o.connect("init", env)
	if err != nil {
		return err
	}
	rep, err := initRepo(ctx, client, reader.Where, o)
	if err != nil {
		return err
	}
	if o.format == "json" {
		return printJSON(env, rep)
	}
	return printInit(env.Stdout, rep)
}

// initRepo reads what the repository holds, plans the writes that are
// missing and, unless dry, makes them: the files (a commit on InitBranch
// and a pull request, or a commit on the default branch), then the labels.
// A file or label already there is left as it is.
func initRepo(ctx context.Context, sf setupForge, w live.Where, o *initOptions) (*initReport, error) {
	r, err := startInit(ctx, sf, w, o.commit, o.dryRun)
	if err != nil {
		return nil, err
	}
	r.rep.Runner, r.rep.agents = o.runner, o.mapped
	missing, err := r.filesOnBase(ctx)
	if err != nil {
		return nil, err
	}
	toCommit, err := r.filesToCommit(ctx, missing)
	if err != nil {
		return nil, err
	}
	r.planCommit(toCommit)
	if err := r.planPull(ctx, missing); err != nil {
		return nil, err
	}
	if err := r.planLabels(ctx); err != nil {
		return nil, err
	}
	if err := r.planPosture(ctx, o.logins); err != nil {
		return nil, err
	}
	r.readDone(ctx)
	r.finishPlan()
	if o.dryRun {
		return r.rep, nil
	}
	if err := r.write(ctx); err != nil {
		return nil, err
	}
	r.rep.Next, r.rep.Done = nextSteps(r.rep)
	return r.rep, nil
}

// initRun is one run of `init`: the server it works on, the repository as
// read, and the report it plans and fills in.
type initRun struct {
	sf     setupForge
	w      live.Where
	direct bool // --commit: write onto the default branch
	info   port.Repository
	base   string // the default branch
	rep    *initReport
	// branchExists says InitBranch exists (looked for only when files
	// go onto it).
	branchExists bool
	newLabels    []issues.LabelSpec
	posture      *postureRun
}

// startInit reads the repository and starts the report; an archived
// repository, or an empty one without --commit, cannot be set up.
func startInit(ctx context.Context, sf setupForge, w live.Where, direct, dry bool) (*initRun, error) {
	info, err := sf.Repository(ctx)
	if err != nil {
		return nil, w.Error("read the repository", err)
	}
	base := info.DefaultBranch
	if base == "" {
		base = "main"
	}
	rep := &initReport{Repo: w.Repo, Server: w.Server, DefaultBranch: base, Mode: "pull-request", DryRun: dry,
		Files: []initFileState{}, Labels: []initLabelState{}, Writes: []string{}, Done: []string{}, base: strings.TrimRight(info.HTMLURL, "/"),
		files: map[string][]byte{}}
	if direct {
		rep.Mode = "commit"
	}
	if info.Archived {
		return nil, cannotRun(fmt.Errorf("init: %s is archived: it takes no writes", w.Repo))
	}
	if info.Empty && !direct {
		return nil, usageError("init: %s has no commit yet: there is no %s to open a pull request against; run init with --commit to write the files onto it", w.Repo, base)
	}
	return &initRun{sf: sf, w: w, direct: direct, info: info, base: base, rep: rep}, nil
}

// filesOnBase reads what the default branch holds of the files init
// writes, and returns the ones it lacks.
func (r *initRun) filesOnBase(ctx context.Context) ([]initFile, error) {
	var missing []initFile
	for _, f := range initFiles(r.rep.Runner, r.rep.agents) {
		state := ""
		if !r.info.Empty {
			var err error
			if state, err = fileState(ctx, r.sf, r.base, f); err != nil {
				return nil, r.w.Error(fmt.Sprintf("read %s on %s", f.path, r.base), err)
			}
		}
		if state == "" {
			missing = append(missing, f)
			continue
		}
		r.noteFile(f, state, r.base)
	}
	return missing, nil
}

// noteFile records a file's state on a branch, with a note when it is
// not the file init writes.
func (r *initRun) noteFile(f initFile, state, branch string) {
	if state == stateDiffers {
		r.rep.Notes = append(r.rep.Notes, fmt.Sprintf("%s on %s is not the file init writes; it is left as it is", f.path, branch))
	}
	r.rep.Files = append(r.rep.Files, initFileState{Path: f.path, State: state, Branch: branch})
}

// filesToCommit are the missing files to commit: all of them onto the
// default branch with --commit, else those InitBranch lacks too.
func (r *initRun) filesToCommit(ctx context.Context, missing []initFile) ([]initFile, error) {
	switch {
	case len(missing) == 0:
		return nil, nil
	case r.direct:
		for _, f := range missing {
			r.noteFile(f, stateCreate, r.base)
		}
		return missing, nil
	}
	var err error
	if r.branchExists, err = r.sf.BranchExists(ctx, InitBranch); err != nil {
		return nil, r.w.Error("look for the branch "+InitBranch, err)
	}
	var toCommit []initFile
	for _, f := range missing {
		state := ""
		if r.branchExists {
			if state, err = fileState(ctx, r.sf, InitBranch, f); err != nil {
				return nil, r.w.Error(fmt.Sprintf("read %s on %s", f.path, InitBranch), err)
			}
		}
		if state == "" {
			state = stateCreate
			toCommit = append(toCommit, f)
		}
		r.noteFile(f, state, InitBranch)
	}
	return toCommit, nil
}

// planCommit plans the commit of the files: onto the default branch,
// onto InitBranch, or onto InitBranch made from the default branch.
func (r *initRun) planCommit(toCommit []initFile) {
	if len(toCommit) == 0 {
		return
	}
	rep, base := r.rep, r.base
	c := &initCommit{Branch: base}
	var paths []string
	for _, f := range toCommit {
		paths = append(paths, f.path)
		rep.files[f.path] = f.content
	}
	c.Files = paths
	switch {
	case r.direct:
		rep.Writes = append(rep.Writes, fmt.Sprintf("commit %s onto %s", strings.Join(paths, ", "), base))
	case r.branchExists:
		c.Branch = InitBranch
		rep.Writes = append(rep.Writes, fmt.Sprintf("commit %s onto %s", strings.Join(paths, ", "), InitBranch))
	default:
		c.Branch, c.NewBranch, c.From = InitBranch, true, base
		rep.Writes = append(rep.Writes, fmt.Sprintf("create the branch %s from %s with a commit of %s", InitBranch, base, strings.Join(paths, ", ")))
	}
	rep.Commit = c
}

// planPull plans the pull request, needed while a file init writes is
// only on InitBranch, unless one is open already.
func (r *initRun) planPull(ctx context.Context, missing []initFile) error {
	if r.direct || len(missing) == 0 {
		return nil
	}
	pull := &initPull{Head: InitBranch, Base: r.base, State: stateCreate}
	r.rep.Pull = pull
	if r.branchExists {
		pr, open, err := r.sf.OpenPull(ctx, InitBranch, r.base)
		if err != nil {
			return r.w.Error("look for an open pull request from "+InitBranch, err)
		}
		if open {
			pull.State, pull.Number, pull.URL = statePresent, pr.Number, pr.HTMLURL
		}
	}
	if pull.State == stateCreate {
		r.rep.Writes = append(r.rep.Writes, fmt.Sprintf("open a pull request from %s into %s", InitBranch, r.base))
	}
	return nil
}

// planLabels plans the labels the repository lacks; one there under the
// same name is left as it is.
func (r *initRun) planLabels(ctx context.Context) error {
	existing, err := r.sf.Labels(ctx)
	if err != nil {
		return r.w.Error("list the labels", err)
	}
	byName := map[string]port.RepoLabel{}
	for _, l := range existing {
		if _, dup := byName[l.Name]; !dup {
			byName[l.Name] = l
		}
	}
	rep := r.rep
	for _, s := range InitLabels() {
		if l, ok := byName[s.Name]; ok {
			rep.Labels = append(rep.Labels, initLabelState{Name: l.Name, Color: l.Color, Description: l.Description, State: statePresent})
			continue
		}
		rep.Labels = append(rep.Labels, initLabelState{Name: s.Name, Color: s.Color, Description: s.Description, State: stateCreate})
		rep.Writes = append(rep.Writes, fmt.Sprintf("create the label %s (#%s)", s.Name, s.Color))
		r.newLabels = append(r.newLabels, s)
	}
	return nil
}

// readDone reads what tells a next step done: the secrets' names, and
// whether the default branch's settings file publishes ledger-public-key.
// A read that fails leaves the steps to do.
func (r *initRun) readDone(ctx context.Context) {
	if names, err := r.sf.SecretNames(ctx); err == nil {
		r.rep.secrets = names
	}
	if r.info.Empty {
		return
	}
	f, err := r.sf.FileAt(ctx, r.base, settings.FileName, maxSetupFile)
	if err != nil {
		return
	}
	if l, err := settings.FileLayer(settings.FileName, f.Content); err == nil {
		if res, err := settings.Resolve(l); err == nil && res.LedgerPublicKey != "" {
			r.rep.publicKey = true
		}
	}
}

// finishPlan says whether anything changes, warns when the token cannot
// push, and lists the next steps.
func (r *initRun) finishPlan() {
	rep := r.rep
	rep.Changed = len(rep.Writes) > 0
	if !r.info.CanPush && rep.Changed {
		rep.Notes = append(rep.Notes, fmt.Sprintf("the token has no write access to %s: the server will refuse these writes", r.w.Repo))
	}
	rep.Next, rep.Done = nextSteps(rep)
}

// write makes the writes, in the order planned: the commit, the pull
// request, the labels.
func (r *initRun) write(ctx context.Context) error {
	if err := r.writeCommit(ctx); err != nil {
		return err
	}
	if p := r.rep.Pull; p != nil && p.State == stateCreate {
		pr, err := r.sf.CreatePull(ctx, InitBranch, r.base, "Adopt gns-guard", pullBody(r.rep))
		if err != nil {
			return r.w.Error(fmt.Sprintf("open a pull request from %s into %s", InitBranch, r.base), err)
		}
		p.Number, p.URL = pr.Number, pr.HTMLURL
	}
	for _, s := range r.newLabels {
		if _, err := r.sf.CreateLabel(ctx, s); err != nil {
			return r.w.Error("create the label "+s.Name, err)
		}
	}
	if r.posture != nil {
		return r.posture.write(ctx, r.rep)
	}
	return nil
}

// writeCommit makes the planned commit, if any.
func (r *initRun) writeCommit(ctx context.Context) error {
	c := r.rep.Commit
	if c == nil {
		return nil
	}
	cm := port.Commit{Branch: c.Branch, Message: "Adopt gns-guard: its workflow, settings and issue template"}
	if c.NewBranch {
		cm.Branch, cm.NewBranch = c.From, c.Branch
	}
	for _, p := range c.Files {
		cm.Files = append(cm.Files, port.FileChange{Path: p, Content: r.rep.files[p]})
	}
	var err error
	if c.SHA, err = r.sf.CommitFiles(ctx, cm); err != nil {
		return r.w.Error(fmt.Sprintf("commit %s onto %s", strings.Join(c.Files, ", "), c.Branch), err)
	}
	return nil
}

// fileState says whether ref holds f as init writes it (present), with
// other content (differs), or not at all ("").
func fileState(ctx context.Context, sf setupForge, ref string, f initFile) (string, error) {
	got, err := sf.FileAt(ctx, ref, f.path, maxSetupFile)
	switch {
	case errors.Is(err, issues.ErrNotFound):
		return "", nil
	case errors.Is(err, issues.ErrTooLarge):
		return stateDiffers, nil
	case err != nil:
		return "", err
	case bytes.Equal(got.Content, f.content):
		return statePresent, nil
	}
	return stateDiffers, nil
}

// pullBody describes the pull request `init` opens.
func pullBody(rep *initReport) string {
	var b strings.Builder
	b.WriteString("Adds [gns-guard](https://github.com/gns-guard/gns-guard), which governs AI-agent workflows kept in issues, as `gns-guard init` wrote it:\n\n")
	for _, f := range initFiles(rep.Runner, rep.agents) {
		for _, s := range rep.Files {
			if s.Path == f.path && s.Branch == InitBranch {
				fmt.Fprintf(&b, "- `%s`: %s;\n", f.path, f.what)
			}
		}
	}
	b.WriteString("\nBefore merging, set the Actions secret `GNS_GUARD_LEDGER_KEY` (repository Settings → Actions → Secrets) to the output of `gns-guard keygen`: it signs the guard's ledger. ")
	b.WriteString("Set `GNS_GUARD_ADMIN_TOKEN` to the repository owner's token " + adminTokenUse + "\n")
	b.WriteString("Set `GNS_GUARD_TOKEN` to " + guardTokenUse + "\n")
	return b.String()
}

// adminTokenUse and guardTokenUse say, after "the repository owner's
// token", which scopes the two tokens need (the table of package scopes)
// and what the guard does with them.
var (
	adminTokenUse = "(scopes " + scopes.Admin.List() + "): the guard anchors each issue's ledger where agents cannot write, locks issues, and reads who may do what (collaborators' permissions, teams' members) with it."
	guardTokenUse = "a token of the guard's own account (scopes " + scopes.Guard.List() + "), a member of the team " + AgentsTeam + ": on a fork's pull request the Actions token is read-only."
)

// nextStep is a step left to do by hand, and what it says once done.
type nextStep struct {
	todo, done string
	isDone     bool
}

// nextSteps are what is left to do by hand, and the steps this run found
// done already (a second init repeats none of them).
func nextSteps(rep *initReport) (todo, done []string) {
	secrets := "repository Settings → Actions → Secrets"
	newIssue := `open an issue from the "` + issueTemplateName + `" template`
	if rep.base != "" {
		secrets += ": " + rep.base + "/settings/actions/secrets"
		newIssue += " (" + rep.base + "/issues/new/choose)"
	}
	secret := func(name, todo string) nextStep {
		return nextStep{todo: todo, done: "The Actions secret " + name + " is set.", isDone: slices.Contains(rep.secrets, name)}
	}
	var steps []nextStep
	if rep.Runner == RunnerHost {
		steps = append(steps, nextStep{todo: "Install gns-guard on the runner's host, on the PATH of its host-mode runner (label ubuntu-latest:host), in a directory its jobs cannot write (owned by root): a release binary, or `go install github.com/gns-guard/gns-guard/cmd/gns-guard@" + installVersion() + "` with GOBIN set there. " + pinNote()})
	}
	steps = append(steps,
		secret("GNS_GUARD_LEDGER_KEY", "Set the Actions secret GNS_GUARD_LEDGER_KEY ("+secrets+") to the output of `gns-guard keygen`: it signs the guard's ledger."),
		secret("GNS_GUARD_ADMIN_TOKEN", "Set the Actions secret GNS_GUARD_ADMIN_TOKEN to the repository owner's token "+adminTokenUse))
	if step := mergeStep(rep.Pull); step != "" {
		steps = append(steps, nextStep{todo: step})
	}
	steps = append(steps, nextStep{todo: "Then " + newIssue + ": fill in its ## Task and leave the checkpoint's issue: 0, which the guard's first run sets to the issue's number."},
		secret("GNS_GUARD_TOKEN", "Set the Actions secret GNS_GUARD_TOKEN to "+guardTokenUse),
		nextStep{todo: "Publish the output of `gns-guard pubkey` as ledger-public-key in " + settings.FileName + ".",
			done: settings.FileName + " publishes ledger-public-key.", isDone: rep.publicKey},
		nextStep{todo: "Run `gns-guard doctor --repo " + rep.Repo + "` to see which guarantees of the threat model hold."})
	for _, st := range steps {
		if st.isDone {
			done = append(done, st.done)
		} else {
			todo = append(todo, st.todo)
		}
	}
	return todo, done
}

// mergeStep is the step of merging init's pull request, if one is open.
func mergeStep(p *initPull) string {
	switch {
	case p == nil:
		return ""
	case p.Number > 0 && p.URL != "":
		return fmt.Sprintf("Merge pull request #%d: %s", p.Number, p.URL)
	case p.Number > 0:
		return fmt.Sprintf("Merge pull request #%d.", p.Number)
	}
	return fmt.Sprintf("Merge the pull request from %s into %s.", p.Head, p.Base)
}

// installVersion is the version `go install` fetches: this build's
// release, else latest.
func installVersion() string {
	if v := version.Info().Version; releaseVersion.MatchString(v) {
		return v
	}
	return "latest"
}

// releaseVersion is a release's version, vX.Y.Z.
var releaseVersion = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+$`)

// printInit prints the text form of an initReport.
func printInit(out io.Writer, rep *initReport) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "gns-guard init: %s on %s, default branch %s\n\n", rep.Repo, rep.Server, rep.DefaultBranch)
	writeInitFiles(&b, rep)
	writeInitLabels(&b, rep)
	writeInitPosture(&b, rep)
	for _, n := range rep.Notes {
		fmt.Fprintf(&b, "Note: %s.\n", n)
	}
	b.WriteByte('\n')
	writeInitOutcome(&b, rep)
	if len(rep.Done) > 0 {
		b.WriteString("\nAlready done:\n")
		for _, s := range rep.Done {
			fmt.Fprintf(&b, "  - %s\n", s)
		}
	}
	b.WriteString("\nNext steps:\n")
	for i, s := range rep.Next {
		fmt.Fprintf(&b, "  %d. %s\n", i+1, s)
	}
	_, err := out.Write(b.Bytes())
	return err
}

// would words a write as done, or as planned in a dry run.
func (rep *initReport) would(done, planned string) string {
	if rep.DryRun {
		return planned
	}
	return done
}

// writeInitFiles writes the files, the commit and the pull request.
func writeInitFiles(b *bytes.Buffer, rep *initReport) {
	if rep.Mode == "commit" {
		fmt.Fprintf(b, "Files, on %s:\n", rep.DefaultBranch)
	} else {
		fmt.Fprintf(b, "Files, proposed in a pull request from %s into %s:\n", InitBranch, rep.DefaultBranch)
	}
	tw := tabwriter.NewWriter(b, 0, 8, 2, ' ', 0)
	for _, f := range rep.Files {
		var s string
		switch f.State {
		case stateCreate:
			s = rep.would("written", "would be written") + " on " + f.Branch
		case statePresent:
			s = "already there on " + f.Branch
		default:
			s = "on " + f.Branch + " with other content: left as it is"
		}
		fmt.Fprintf(tw, "  %s\t%s\n", f.Path, s)
	}
	tw.Flush()
	if c := rep.Commit; c != nil && c.SHA != "" {
		fmt.Fprintf(b, "  commit %s on %s\n", short(c.SHA), c.Branch)
	}
	if p := rep.Pull; p != nil {
		switch {
		case p.State == statePresent:
			fmt.Fprintf(b, "Pull request #%d, already open: %s\n", p.Number, p.URL)
		case rep.DryRun:
			fmt.Fprintf(b, "Pull request from %s into %s: would be opened\n", p.Head, p.Base)
		default:
			fmt.Fprintf(b, "Pull request #%d, opened: %s\n", p.Number, p.URL)
		}
	}
}

// writeInitLabels writes the labels, one a line.
func writeInitLabels(b *bytes.Buffer, rep *initReport) {
	b.WriteString("Labels:\n")
	tw := tabwriter.NewWriter(b, 0, 8, 2, ' ', 0)
	for _, l := range rep.Labels {
		s := "already there, left as it is"
		if l.State == stateCreate {
			s = rep.would("created", "would be created")
		}
		fmt.Fprintf(tw, "  %s\t#%s\t%s\n", l.Name, l.Color, s)
	}
	tw.Flush()
}

// writeInitOutcome writes what changed: nothing, the writes a dry run
// would make, or how many were made.
func writeInitOutcome(b *bytes.Buffer, rep *initReport) {
	switch {
	case !rep.Changed:
		b.WriteString("Nothing to change: the files are there, ")
		if rep.Pull != nil {
			b.WriteString("the pull request is open, ")
		}
		b.WriteString("and every label is present.\n")
	case rep.DryRun:
		fmt.Fprintf(b, "Dry run: nothing was written. The %d write(s) init would make:\n", len(rep.Writes))
		for _, w := range rep.Writes {
			fmt.Fprintf(b, "  - %s\n", w)
		}
	default:
		fmt.Fprintf(b, "%d write(s) made.\n", len(rep.Writes))
	}
}

// short is a commit id's first 10 hex digits.
func short(sha string) string {
	if len(sha) > 10 {
		return sha[:10]
	}
	return sha
}
