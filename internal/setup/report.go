package setup

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/scopes"
	"github.com/gns-guard/gns-guard/internal/settings"
	"github.com/gns-guard/gns-guard/internal/version"
)

// States of a file, label, pull request or posture step.
const (
	// StateCreate: written now, or planned by a dry run.
	StateCreate = "create"
	// StatePresent: already there as wanted; left as it is.
	StatePresent = "present"
	// StateDiffers: present with other content; left alone.
	StateDiffers = "differs"
	// StateByHand: a posture step init cannot take (its token, or the
	// repository's owner, does not allow it); the step says what to do.
	StateByHand = "by-hand"
)

// Report is what `init` did or would do, as JSON and text.
type Report struct {
	Repo          string `json:"repo"`
	Server        string `json:"server"`
	DefaultBranch string `json:"default_branch"`
	// Mode is pull-request or commit (--commit).
	Mode string `json:"mode"`
	// Runner is docker or host (--runner).
	Runner string `json:"runner"`
	// GateAccount is the gated posture's gate account (--gate-account).
	GateAccount string `json:"gate_account,omitempty"`
	DryRun      bool   `json:"dry_run"`
	// Changed says a write was made, or planned when dry.
	Changed bool          `json:"changed"`
	Files   []FileState   `json:"files"`
	Commit  *Commit       `json:"commit,omitempty"`
	Pull    *Pull         `json:"pull_request,omitempty"`
	Labels  []LabelState  `json:"labels"`
	Writes  []string      `json:"writes"`
	Notes   []string      `json:"notes,omitempty"`
	Posture []PostureStep `json:"posture,omitempty"`
	Next    []string      `json:"next_steps"`
	// Done are the next steps found done already.
	Done  []string          `json:"done"`
	base  string            // the default branch's page, for next steps
	files map[string][]byte // path → content, of the files to commit
	// secrets are secret names (nil: unread); publicKey: the base settings
	// publish ledger-public-key.
	secrets   []string
	publicKey bool
	// agents is the agents map the settings file gets (--agents).
	agents map[string][]string
	// meterSet: the base settings set meter-url and meter-public-key;
	// baseGate is their gate-account.
	meterSet bool
	baseGate string
}

// FileState is an init file as found or written on a branch.
type FileState struct {
	Path string `json:"path"`
	// State is create, present or differs, on Branch.
	State  string `json:"state"`
	Branch string `json:"branch"`
}

// Commit is the commit of init's files.
type Commit struct {
	Branch    string   `json:"branch"`
	NewBranch bool     `json:"new_branch"`
	From      string   `json:"from,omitempty"`
	Files     []string `json:"files"`
	SHA       string   `json:"sha,omitempty"`
}

// Pull is the pull request that proposes init's files.
type Pull struct {
	// State is create (opened or planned) or present (already open).
	State  string `json:"state"`
	Number int64  `json:"number,omitempty"`
	URL    string `json:"url,omitempty"`
	Head   string `json:"head"`
	Base   string `json:"base"`
}

// LabelState is a governance label, as found or created.
type LabelState struct {
	Name        string `json:"name"`
	Color       string `json:"color"`
	Description string `json:"description"`
	// State is create or present (color and description as found).
	State string `json:"state"`
}

// pullBody describes the pull request `init` opens.
func pullBody(rep *Report) string {
	var b strings.Builder
	b.WriteString("Adds [gns-guard](https://github.com/gns-guard/gns-guard), which governs AI-agent workflows kept in issues, " +
		"as `gns-guard init` wrote it:\n\n")
	for _, f := range files(rep) {
		for _, s := range rep.Files {
			if s.Path == f.path && s.Branch == Branch {
				fmt.Fprintf(&b, "- `%s`: %s;\n", f.path, f.what)
			}
		}
	}
	b.WriteString("\nBefore merging, set the Actions secret `GNS_GUARD_LEDGER_KEY` (repository Settings → Actions → Secrets) " +
		"to the output of `gns-guard keygen`: it signs the guard's ledger. ")
	b.WriteString("Set `GNS_GUARD_ADMIN_TOKEN` to the repository owner's token " + adminTokenUse + "\n")
	b.WriteString("Set `GNS_GUARD_TOKEN` to " + guardToken(rep) + "\n")
	return b.String()
}

// guardToken is guardTokenUse, its team the gate's when gated.
func guardToken(rep *Report) string {
	if rep.GateAccount == "" {
		return guardTokenUse
	}
	return strings.Replace(guardTokenUse, AgentsTeam, GateTeam, 1)
}

// adminTokenUse and guardTokenUse say, after "the repository owner's
// token", which scopes the two tokens need (the table of package scopes)
// and what the guard does with them.
var (
	adminTokenUse = "(scopes " + scopes.Admin.List() + "): the guard anchors each issue's ledger where agents cannot write, locks issues, " +
		"and reads who may do what (collaborators' permissions, teams' members) with it."
	guardTokenUse = "a token of the guard's own account (scopes " + scopes.Guard.List() + "), a member of the team " + AgentsTeam +
		": on a fork's pull request the Actions token is read-only."
)

// nextStep is a step by hand, and its text once done.
type nextStep struct {
	todo, done string
	isDone     bool
}

// nextSteps are what is left to do by hand, and the steps this run found
// done already (a second init repeats none of them).
func nextSteps(rep *Report) (todo, done []string) {
	secrets := "repository Settings → Actions → Secrets"
	newIssue := `open an issue from the "` + issues.TaskTemplate + `" template`
	if rep.base != "" {
		secrets += ": " + rep.base + "/settings/actions/secrets"
		newIssue += " (" + rep.base + "/issues/new/choose)"
	}
	secret := func(name, todo string) nextStep {
		return nextStep{todo: todo, done: "The Actions secret " + name + " is set.", isDone: slices.Contains(rep.secrets, name)}
	}
	var steps []nextStep
	if rep.Runner == RunnerHost {
		steps = append(steps, nextStep{todo: "Install gns-guard on the runner's host, on the PATH of its host-mode runner (label ubuntu-latest:host), " +
			"in a directory its jobs cannot write (owned by root): a release binary, " +
			"or `go install github.com/gns-guard/gns-guard/cmd/gns-guard@" + installVersion() + "` with GOBIN set there. " + pinNote()})
	}
	steps = append(steps,
		secret("GNS_GUARD_LEDGER_KEY", "Set the Actions secret GNS_GUARD_LEDGER_KEY ("+secrets+") "+
			"to the output of `gns-guard keygen`: it signs the guard's ledger."),
		secret("GNS_GUARD_ADMIN_TOKEN", "Set the Actions secret GNS_GUARD_ADMIN_TOKEN to the repository owner's token "+adminTokenUse))
	if step := mergeStep(rep.Pull); step != "" {
		steps = append(steps, nextStep{todo: step})
	}
	steps = append(steps,
		nextStep{todo: "Then " + newIssue + ": fill in its ## Task and leave the checkpoint's issue: 0, " +
			"which the guard's first run sets to the issue's number."},
		secret("GNS_GUARD_TOKEN", "Set the Actions secret GNS_GUARD_TOKEN to "+guardToken(rep)))
	steps = append(steps, gatedSteps(rep)...)
	steps = append(steps,
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

// gatedSteps are the gated posture's tokens, meter and settings.
func gatedSteps(rep *Report) []nextStep {
	gate := rep.GateAccount
	if gate == "" {
		return nil
	}
	owner, _, _ := strings.Cut(rep.Repo, "/")
	var logins []string
	for _, ls := range rep.agents {
		logins = append(logins, ls...)
	}
	slices.Sort(logins)
	agents := "each agent's account"
	if logins = slices.Compact(logins); len(logins) > 0 {
		agents += " (" + strings.Join(logins, ", ") + ")"
	}
	steps := []nextStep{
		{todo: "Give " + agents + " a token with the scopes " + scopes.GatedAgent.List() +
			", and no write scope: an agent reads, and writes through the gate (gns-guard report and spawn)."},
		{todo: "Give the gate account " + gate + " a token with the scopes " + scopes.Gate.List() + ", and start the meter with it " +
			"and a meter key (gns-guard keygen makes one): `GNS_GUARD_METER_KEY=… GNS_GATE_TOKEN=… gns-guard meter --scope " + owner +
			" --gate-token-env GNS_GATE_TOKEN`."},
		{todo: "Set meter-url (the meter's address) and meter-public-key (what `gns-guard meter --public-key` prints) in " +
			settings.FileName + ".", done: settings.FileName + " sets meter-url and meter-public-key.", isDone: rep.meterSet},
	}
	if slices.ContainsFunc(rep.Files, func(f FileState) bool { return f.Path == settings.FileName && f.State == StateDiffers }) {
		steps = append(steps, nextStep{todo: "Set gate-account: " + gate + ", and map each agent to its login in agents, in " +
			settings.FileName + ": it is not the file init writes.", done: settings.FileName + " sets gate-account: " + gate + ".",
			isDone: strings.EqualFold(rep.baseGate, gate)})
	}
	return steps
}

// mergeStep merges init's open pull request, if any.
func mergeStep(p *Pull) string {
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

// installVersion is this build's release, else latest.
func installVersion() string {
	if v := version.Info().Version; releaseVersion.MatchString(v) {
		return v
	}
	return "latest"
}

// releaseVersion is a release's version, vX.Y.Z.
var releaseVersion = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+$`)

// WriteText writes the report's text form to w.
func (rep *Report) WriteText(w io.Writer) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "gns-guard init: %s on %s, default branch %s\n\n", rep.Repo, rep.Server, rep.DefaultBranch)
	writeFiles(&b, rep)
	writeLabels(&b, rep)
	writePosture(&b, rep)
	for _, n := range rep.Notes {
		fmt.Fprintf(&b, "Note: %s.\n", n)
	}
	b.WriteByte('\n')
	writeOutcome(&b, rep)
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
	_, err := w.Write(b.Bytes())
	return err
}

// would words a write as done, or planned when dry.
func (rep *Report) would(done, planned string) string {
	if rep.DryRun {
		return planned
	}
	return done
}

// writeFiles writes the files, the commit and the pull request.
func writeFiles(b *bytes.Buffer, rep *Report) {
	if rep.Mode == "commit" {
		fmt.Fprintf(b, "Files, on %s:\n", rep.DefaultBranch)
	} else {
		fmt.Fprintf(b, "Files, proposed in a pull request from %s into %s:\n", Branch, rep.DefaultBranch)
	}
	tw := tabwriter.NewWriter(b, 0, 8, 2, ' ', 0)
	for _, f := range rep.Files {
		var s string
		switch f.State {
		case StateCreate:
			s = rep.would("written", "would be written") + " on " + f.Branch
		case StatePresent:
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
		case p.State == StatePresent:
			fmt.Fprintf(b, "Pull request #%d, already open: %s\n", p.Number, p.URL)
		case rep.DryRun:
			fmt.Fprintf(b, "Pull request from %s into %s: would be opened\n", p.Head, p.Base)
		default:
			fmt.Fprintf(b, "Pull request #%d, opened: %s\n", p.Number, p.URL)
		}
	}
}

// writeLabels writes the labels, one a line.
func writeLabels(b *bytes.Buffer, rep *Report) {
	b.WriteString("Labels:\n")
	tw := tabwriter.NewWriter(b, 0, 8, 2, ' ', 0)
	for _, l := range rep.Labels {
		s := "already there, left as it is"
		if l.State == StateCreate {
			s = rep.would("created", "would be created")
		}
		fmt.Fprintf(tw, "  %s\t#%s\t%s\n", l.Name, l.Color, s)
	}
	tw.Flush()
}

// writePosture writes the posture's steps, one a line.
func writePosture(b *bytes.Buffer, rep *Report) {
	if len(rep.Posture) == 0 {
		return
	}
	b.WriteString("Posture (docs/contract.md, the threat model):\n")
	for _, s := range rep.Posture {
		state := map[string]string{StateCreate: rep.would("done", "would be done"), StatePresent: "already so", StateByHand: "to do by hand"}[s.State]
		fmt.Fprintf(b, "  %s: %s", s.What, state)
		if s.Why != "" {
			fmt.Fprintf(b, " (%s)", s.Why)
		}
		b.WriteByte('\n')
	}
}

// writeOutcome: nothing, a dry run's writes, or how many were made.
func writeOutcome(b *bytes.Buffer, rep *Report) {
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
