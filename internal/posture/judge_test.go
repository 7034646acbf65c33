package posture

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

// template is the workflow `gns-guard init` writes.
func template(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("../../examples/workflows/gns-guard.yml")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// recommended is an organisation repository in the recommended posture:
// agents in a team with Issues and Pull requests write and Code read, the
// guard's workflow from the template, main protected with the guard's
// exact check required and no pushes, the secrets set, the key published.
func recommended(t *testing.T) Facts {
	return Facts{
		Repo: "acme/app", Owner: "acme", OwnerIsOrg: true, DefaultBranch: "main",
		Teams: []Team{
			{Name: OwnersTeam, Permission: Owner, Members: []string{"alice"}},
			{Name: "agents", Permission: Write, Units: map[string]Mode{Code: Read, Issues: Write, Pulls: Write, Actions: Read}, Members: []string{"mallory", "gns-bot"}},
		},
		Workflows: []Workflow{{Path: ".gitea/workflows/gns-guard.yml", Content: template(t)}},
		Branch:    Protection{Protected: true, StatusCheck: true, Contexts: []string{"gns-guard / guard (pull_request_target)"}, PushKnown: true},
		Secrets:   []string{"GNS_GUARD_LEDGER_KEY", "GNS_GUARD_ADMIN_TOKEN", "GNS_GUARD_TOKEN"},
		PublicKey: "ed25519:abc",
	}
}

func byID(checks []Check) map[string]Check {
	m := map[string]Check{}
	for _, c := range checks {
		m[c.ID] = c
	}
	return m
}

func TestRecommendedPostureHolds(t *testing.T) {
	checks := Judge(recommended(t))
	for _, c := range checks {
		if !c.Holds {
			t.Errorf("%s does not hold in the recommended posture: %s", c.ID, c.Why)
		}
	}
	if len(checks) != 12 {
		t.Errorf("%d checks, want 12", len(checks))
	}
	if !reflect.DeepEqual(checks, Judge(recommended(t))) {
		t.Error("the same facts gave two answers")
	}
}

func TestWeakPostures(t *testing.T) {
	cases := []struct {
		name   string
		change func(*Facts)
		id     string
		logins []string
		why    string
	}{
		{"a write collaborator pushes code", func(f *Facts) {
			f.Collaborators = []Collaborator{{Login: "eve", Permission: Write}}
		}, CheckCodeWrite, []string{"eve"}, "eve (write collaborator) can push code: a workflow on any branch reads `GNS_GUARD_ADMIN_TOKEN` (the owner's token) and `GNS_GUARD_LEDGER_KEY` (the ledger key)"},
		{"a write collaborator writes Actions", func(f *Facts) {
			f.Collaborators = []Collaborator{{Login: "eve", Permission: Write}}
		}, CheckActionsWrite, []string{"eve"}, "eve (write collaborator) can write Actions"},
		{"a team with Actions write", func(f *Facts) { f.Teams[1].Units[Actions] = Write }, CheckActionsWrite, []string{"gns-bot", "mallory"}, "team agents"},
		{"a team with Code write", func(f *Facts) { f.Teams[1].Units[Code] = Write }, CheckCodeWrite, []string{"gns-bot", "mallory"}, "can push code"},
		{"an admin team that is not the owners", func(f *Facts) {
			f.Teams = append(f.Teams, Team{Name: "leads", Permission: Admin, Members: []string{"bob"}})
		}, CheckAdmin, []string{"bob"}, "bob (team leads) administers"},
		{"an approver in budget-admins is trusted, others are not", func(f *Facts) {
			f.Collaborators = []Collaborator{{Login: "carol", Permission: Admin}, {Login: "dave", Permission: Admin}}
			f.BudgetAdmins = []string{"Carol"}
		}, CheckAdmin, []string{"dave"}, "dave (admin collaborator)"},
		{"the workflow disabled", func(f *Facts) { f.Workflows[0].Disabled = true }, CheckEnabled, nil, "is disabled"},
		{"pull requests on pull_request", func(f *Facts) {
			f.Workflows[0].Content = []byte(strings.ReplaceAll(string(f.Workflows[0].Content), "pull_request_target:", "pull_request:"))
		}, CheckPullTarget, nil, "runs the workflow of the pull request's own head"},
		{"a glob instead of the exact context", func(f *Facts) { f.Branch.Contexts = []string{"gns-guard / guard (*)"} }, CheckStatus, nil, "require that exact context"},
		{"no status check", func(f *Facts) { f.Branch.StatusCheck = false }, CheckStatus, nil, "requires no status check"},
		{"pushes open to every writer", func(f *Facts) {
			f.Branch.Push = true
			f.Collaborators = []Collaborator{{Login: "eve", Permission: Write}}
		}, CheckPush, []string{"eve"}, "lets every account with Code write push"},
		{"an action on a branch", func(f *Facts) {
			f.Workflows[0].Content = []byte(strings.ReplaceAll(string(f.Workflows[0].Content), "gns-guard/gns-guard@v1", "gns-guard/gns-guard@main"))
		}, CheckPinned, nil, "follows a branch"},
		{"a secret missing", func(f *Facts) { f.Secrets = f.Secrets[:1] }, CheckSecrets, nil, "`GNS_GUARD_ADMIN_TOKEN`"},
		{"no public key", func(f *Facts) { f.PublicKey = "" }, CheckPublicKey, nil, "publishes no ledger-public-key"},
		{"secrets unread", func(f *Facts) { f.Unread = map[string]string{FactSecrets: "needs the owner's token"} }, CheckSecrets, nil, "could not check: needs the owner's token"},
		{"no guard workflow", func(f *Facts) { f.Workflows = nil }, CheckWorkflow, nil, "nothing judges the issues"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := recommended(t)
			c.change(&f)
			checks := Judge(f)
			got := byID(checks)[c.id]
			if got.Holds || !strings.Contains(got.Why, c.why) {
				t.Errorf("%s: holds %v, why %q; want it broken, saying %q", c.id, got.Holds, got.Why, c.why)
			}
			if c.logins == nil {
				c.logins = []string{}
			}
			if !reflect.DeepEqual(got.Logins, c.logins) {
				t.Errorf("%s names %v, want %v", c.id, got.Logins, c.logins)
			}
			if Holds(checks) {
				t.Error("Holds says every check holds")
			}
		})
	}
}

func TestStatusContextOfTheTemplate(t *testing.T) {
	got, ok := StatusContext(".gitea/workflows/gns-guard.yml", template(t))
	if want := "gns-guard / guard (pull_request_target)"; !ok || got != want {
		t.Errorf("StatusContext = %q, %v; want %q", got, ok, want)
	}
}
