package setup

import (
	"bytes"
	_ "embed"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/gns-guard/gns-guard/internal/config"
	"github.com/gns-guard/gns-guard/internal/issues"
	"github.com/gns-guard/gns-guard/internal/settings"
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
	// Branch is the branch `init` proposes its files on.
	Branch = "gns-guard-init"
	// WorkflowPath is the guard's workflow.
	WorkflowPath = ".gitea/workflows/gns-guard.yml"
	// IssueTemplatePath is the issue template of a governed task.
	IssueTemplatePath = ".gitea/ISSUE_TEMPLATE/gns-task.md"
)

// The runners `init --runner` writes a workflow for.
const (
	// RunnerDocker needs a Docker engine for the action's image.
	RunnerDocker = "docker"
	// RunnerHost runs the installed gns-guard binary on a host-mode runner.
	RunnerHost = "host"
)

// file is a file `init` writes.
type file struct {
	path    string
	content []byte
	what    string
}

// Workflow is for runner; the host's pins this binary's digest.
func Workflow(runner string) []byte {
	if runner == RunnerHost {
		return pinned(hostWorkflowTemplate, selfDigest())
	}
	return workflowTemplate
}

// IssueTemplate is the issue template of a governed task.
func IssueTemplate() []byte { return issueTemplate }

// files `init` writes for rep, in listing order.
func files(rep *Report) []file {
	what := "the workflow that runs the guard on issue, comment and pull request events"
	if rep.Runner == RunnerHost {
		what += ", with the gns-guard binary of a runner without Docker"
	}
	return []file{
		{WorkflowPath, Workflow(rep.Runner), what},
		{settings.FileName, GatedSettings(rep.agents, rep.GateAccount), "the guard's settings, read from the default branch"},
		{IssueTemplatePath, issueTemplate, `the "` + issues.TaskTemplate + `" issue template: a governed task with its checkpoint to fill in`},
	}
}

// Settings is the template, plus --agents when given.
func Settings(agents map[string][]string) []byte {
	if len(agents) == 0 {
		return configTemplate
	}
	var b bytes.Buffer
	b.Write(configTemplate)
	b.WriteString("\n# The agents and the Gitea accounts that may speak as them: a result\n" +
		"# comment counts as an agent's only when one of its accounts posted it\n" +
		"# (gns-guard init --agents NAME=LOGIN wrote this).\nagents:\n")
	for _, name := range slices.Sorted(maps.Keys(agents)) {
		fmt.Fprintf(&b, "  %s: [%s]\n", yamlText(name), strings.Join(agents[name], ", "))
	}
	return b.Bytes()
}

// GatedSettings is Settings, plus gate-account when gate is set.
func GatedSettings(agents map[string][]string, gate string) []byte {
	if gate == "" {
		return Settings(agents)
	}
	var b bytes.Buffer
	b.Write(Settings(agents))
	b.WriteString("\n# The gated posture (docs/gate.md): agents only read, and write through the\n" +
		"# gate, which writes as this account (gns-guard init --gated wrote this).\n")
	fmt.Fprintf(&b, "gate-account: %s\n", yamlText(gate))
	b.WriteString("\n# The gate's address, and the key it signs with (gns-guard meter\n" +
		"# --public-key prints it): set both once the meter serves the gate.\n# meter-url:\n# meter-public-key:\n")
	return b.Bytes()
}

// yamlText is s as YAML reads it back.
func yamlText(s string) string {
	if plainYAML.MatchString(s) {
		return s
	}
	return strconv.Quote(s)
}

// plainYAML reads unquoted as the same text.
var plainYAML = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]*$`)

// login is a Gitea login.
var login = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`)

// Labels are the governance labels `init` creates
// (config.GovernanceSpecs).
func Labels() []issues.LabelSpec { return config.GovernanceSpecs(config.DefaultLabels()) }
