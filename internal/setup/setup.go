package setup

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gns-guard/gns-guard/internal/exitcode"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/live"
	"github.com/gns-guard/gns-guard/internal/port"
	"github.com/gns-guard/gns-guard/internal/settings"
)

// Forge is what `init` needs: the repository and the posture it builds.
type Forge interface {
	port.Setup
	port.PostureSetup
}

// Options say how Run sets a repository up.
type Options struct {
	// Commit writes onto the default branch, not a pull request (--commit).
	Commit bool
	// DryRun plans every write and makes none (--dry-run).
	DryRun bool
	// Runner is RunnerDocker or RunnerHost (--runner).
	Runner string
	// Team are the accounts to put in AgentsTeam (--agents).
	Team []string
	// Agents maps agent name to accounts speaking as it (--agents
	// NAME=LOGIN).
	Agents map[string][]string
	// GateAccount sets the gated posture up (--gated --gate-account).
	GateAccount string
}

// maxFile: anything longer is not init's file.
const maxFile = settings.MaxFileBytes

// Run reads what the repository holds, plans the writes that are
// missing and, unless dry, makes them: the files (a commit on Branch
// and a pull request, or a commit on the default branch), then the
// labels and the posture. A file or label already there is left as it is.
func Run(ctx context.Context, sf Forge, w live.Where, o Options) (*Report, error) {
	if o.GateAccount != "" && !login.MatchString(o.GateAccount) {
		return nil, &exitcode.UsageError{Err: fmt.Errorf("init: --gate-account %q is not a Gitea login", o.GateAccount)}
	}
	r, err := start(ctx, sf, w, o.Commit, o.DryRun)
	if err != nil {
		return nil, err
	}
	r.rep.Runner, r.rep.agents, r.rep.GateAccount = o.Runner, o.Agents, o.GateAccount
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
	if err := r.planPosture(ctx, o.Team, o.GateAccount); err != nil {
		return nil, err
	}
	r.readDone(ctx)
	r.finishPlan()
	if o.DryRun {
		return r.rep, nil
	}
	if err := r.write(ctx); err != nil {
		return nil, err
	}
	r.rep.Next, r.rep.Done = nextSteps(r.rep)
	return r.rep, nil
}

// run is one run of `init`: the server it works on, the repository as
// read, and the report it plans and fills in.
type run struct {
	sf     Forge
	w      live.Where
	direct bool // --commit: write onto the default branch
	info   port.Repository
	base   string // the default branch
	rep    *Report
	// branchExists is looked up only when files go onto Branch.
	branchExists bool
	newLabels    []issues.LabelSpec
	posture      *postureRun
}

// start refuses an archived repository, or an empty one without --commit.
func start(ctx context.Context, sf Forge, w live.Where, direct, dry bool) (*run, error) {
	info, err := sf.Repository(ctx)
	if err != nil {
		return nil, w.Error("read the repository", err)
	}
	base := info.DefaultBranch
	if base == "" {
		base = "main"
	}
	rep := &Report{Repo: w.Repo, Server: w.Server, DefaultBranch: base, Mode: "pull-request", DryRun: dry,
		Files: []FileState{}, Labels: []LabelState{}, Writes: []string{}, Done: []string{}, base: strings.TrimRight(info.HTMLURL, "/"),
		files: map[string][]byte{}}
	if direct {
		rep.Mode = "commit"
	}
	if info.Archived {
		return nil, &exitcode.CannotRunError{Err: fmt.Errorf("init: %s is archived: it takes no writes", w.Repo)}
	}
	if info.Empty && !direct {
		return nil, &exitcode.UsageError{Err: fmt.Errorf("init: %s has no commit yet: there is no %s to open a pull request against; "+
			"run init with --commit to write the files onto it", w.Repo, base)}
	}
	return &run{sf: sf, w: w, direct: direct, info: info, base: base, rep: rep}, nil
}

// filesOnBase returns the init files the default branch lacks.
func (r *run) filesOnBase(ctx context.Context) ([]file, error) {
	var missing []file
	for _, f := range files(r.rep) {
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

// noteFile notes a file's state, and when it is not init's.
func (r *run) noteFile(f file, state, branch string) {
	if state == StateDiffers {
		r.rep.Notes = append(r.rep.Notes, fmt.Sprintf("%s on %s is not the file init writes; it is left as it is", f.path, branch))
	}
	r.rep.Files = append(r.rep.Files, FileState{Path: f.path, State: state, Branch: branch})
}

// filesToCommit: all with --commit, else those Branch lacks too.
func (r *run) filesToCommit(ctx context.Context, missing []file) ([]file, error) {
	switch {
	case len(missing) == 0:
		return nil, nil
	case r.direct:
		for _, f := range missing {
			r.noteFile(f, StateCreate, r.base)
		}
		return missing, nil
	}
	var err error
	if r.branchExists, err = r.sf.BranchExists(ctx, Branch); err != nil {
		return nil, r.w.Error("look for the branch "+Branch, err)
	}
	var toCommit []file
	for _, f := range missing {
		state := ""
		if r.branchExists {
			if state, err = fileState(ctx, r.sf, Branch, f); err != nil {
				return nil, r.w.Error(fmt.Sprintf("read %s on %s", f.path, Branch), err)
			}
		}
		if state == "" {
			state = StateCreate
			toCommit = append(toCommit, f)
		}
		r.noteFile(f, state, Branch)
	}
	return toCommit, nil
}

// planCommit targets the default branch, Branch, or a new Branch from it.
func (r *run) planCommit(toCommit []file) {
	if len(toCommit) == 0 {
		return
	}
	rep, base := r.rep, r.base
	c := &Commit{Branch: base}
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
		c.Branch = Branch
		rep.Writes = append(rep.Writes, fmt.Sprintf("commit %s onto %s", strings.Join(paths, ", "), Branch))
	default:
		c.Branch, c.NewBranch, c.From = Branch, true, base
		rep.Writes = append(rep.Writes, fmt.Sprintf("create the branch %s from %s with a commit of %s", Branch, base, strings.Join(paths, ", ")))
	}
	rep.Commit = c
}

// planPull is needed while a file is only on Branch and none is open.
func (r *run) planPull(ctx context.Context, missing []file) error {
	if r.direct || len(missing) == 0 {
		return nil
	}
	pull := &Pull{Head: Branch, Base: r.base, State: StateCreate}
	r.rep.Pull = pull
	if r.branchExists {
		pr, open, err := r.sf.OpenPull(ctx, Branch, r.base)
		if err != nil {
			return r.w.Error("look for an open pull request from "+Branch, err)
		}
		if open {
			pull.State, pull.Number, pull.URL = StatePresent, pr.Number, pr.HTMLURL
		}
	}
	if pull.State == StateCreate {
		r.rep.Writes = append(r.rep.Writes, fmt.Sprintf("open a pull request from %s into %s", Branch, r.base))
	}
	return nil
}

// planLabels leaves a same-named label as it is.
func (r *run) planLabels(ctx context.Context) error {
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
	for _, s := range Labels() {
		if l, ok := byName[s.Name]; ok {
			rep.Labels = append(rep.Labels, LabelState{Name: l.Name, Color: l.Color, Description: l.Description, State: StatePresent})
			continue
		}
		rep.Labels = append(rep.Labels, LabelState{Name: s.Name, Color: s.Color, Description: s.Description, State: StateCreate})
		rep.Writes = append(rep.Writes, fmt.Sprintf("create the label %s (#%s)", s.Name, s.Color))
		r.newLabels = append(r.newLabels, s)
	}
	return nil
}

// readDone reads what tells a next step done: the secrets' names, and
// whether the default branch's settings file publishes ledger-public-key.
// A read that fails leaves the steps to do.
func (r *run) readDone(ctx context.Context) {
	if names, err := r.sf.SecretNames(ctx); err == nil {
		r.rep.secrets = names
	}
	if r.info.Empty {
		return
	}
	f, err := r.sf.FileAt(ctx, r.base, settings.FileName, maxFile)
	if err != nil {
		return
	}
	if l, err := settings.FileLayer(settings.FileName, f.Content); err == nil {
		if res, err := settings.Resolve(l); err == nil {
			c := res.Config
			r.rep.publicKey, r.rep.baseGate = res.LedgerPublicKey != "", c.GateAccount
			r.rep.meterSet = c.MeterURL != "" && c.MeterPublicKey != ""
		}
	}
}

// finishPlan warns when the token cannot push, and lists next steps.
func (r *run) finishPlan() {
	rep := r.rep
	rep.Changed = len(rep.Writes) > 0
	if !r.info.CanPush && rep.Changed {
		rep.Notes = append(rep.Notes, fmt.Sprintf("the token has no write access to %s: the server will refuse these writes", r.w.Repo))
	}
	rep.Next, rep.Done = nextSteps(rep)
}

// write goes in plan order: commit, pull request, labels, posture.
func (r *run) write(ctx context.Context) error {
	if err := r.writeCommit(ctx); err != nil {
		return err
	}
	if p := r.rep.Pull; p != nil && p.State == StateCreate {
		pr, err := r.sf.CreatePull(ctx, Branch, r.base, "Adopt gns-guard", pullBody(r.rep))
		if err != nil {
			return r.w.Error(fmt.Sprintf("open a pull request from %s into %s", Branch, r.base), err)
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
func (r *run) writeCommit(ctx context.Context) error {
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

// fileState: present, differs, or "" when ref lacks f.
func fileState(ctx context.Context, sf Forge, ref string, f file) (string, error) {
	got, err := sf.FileAt(ctx, ref, f.path, maxFile)
	switch {
	case errors.Is(err, issues.ErrNotFound):
		return "", nil
	case errors.Is(err, issues.ErrTooLarge):
		return StateDiffers, nil
	case err != nil:
		return "", err
	case bytes.Equal(got.Content, f.content):
		return StatePresent, nil
	}
	return StateDiffers, nil
}
