package cli

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/gns-guard/gns-guard/internal/live"
	"github.com/gns-guard/gns-guard/internal/mcpserver"
	"github.com/gns-guard/gns-guard/internal/version"
)

// mcpTool is a verb an agent calls as a tool, and what the tool does.
type mcpTool struct {
	name, about string
	file        bool   // the verb reads a FILE: the issue body
	offline     string // the argument that reads the issue without the server
	arrayKey    string // the key of a JSON array document
}

// mcpTools are the verbs an agent calls as tools over the Model Context
// Protocol (docs/mcp.md).
var mcpTools = []mcpTool{
	{name: "context", offline: "body", about: "What the next agent loads on entry to an issue: the checkpoint, the last comments, the files " +
		"and the skill the task names, under a hard token cap with priority truncation (the checkpoint and the current task are never cut)."},
	{name: "report", about: "The exit protocol: post the agent's result comment (header and footer), patch the checkpoint compare-and-swap and " +
		"set the labels. Refuses (an error result with the findings, nothing written) what the guard would fail; a retry with the same invocation " +
		"writes nothing twice."},
	{name: "spawn", about: "In the gated posture, ask the gate for an invocation: a root for your own agent, or a sub-agent under parent. " +
		"Refused (an error result naming the rule) past the cascade limit, for an agent not allowed, or an estimate over half of what remains; " +
		"the answer names the invocation and the providers' base URLs its calls use."},
	{name: "check", file: true, about: "Validate an issue body or a bare checkpoint offline and run the guard's decision on it: the findings " +
		"(an error result when there is a violation), the labels and the writes the guard would make."},
	{name: "recover", about: "A proposed checkpoint rebuilt from the guard's ledger and the agents' footers; with apply, written into the body " +
		"(approvers only)."},
	{name: "history", arrayKey: "entries", about: "The full history of an issue: its archive comments and the current tail, in order; with " +
		"verify, every signature checked."},
	{name: "status", arrayKey: "issues", about: "Every open governed issue of the repository: phase, depth and limit, budget, verdict, last " +
		"and next agent, last activity, staleness."},
}

// mcpOptions are the flags of `mcp`: the connection and the default
// repository every tool works with.
type mcpOptions struct {
	server, token, repo, ledgerKeyEnv string
	format                            string
	// root is the folder the tools' file arguments must lie in, resolved
	// by validate.
	root string
}

// mcpFlags declares the flags of `mcp`.
func mcpFlags(fs *flag.FlagSet) options {
	o := &mcpOptions{}
	fs.StringVar(&o.server, "server", "", "the Gitea server's `URL` (default: $GITHUB_SERVER_URL)")
	fs.StringVar(&o.token, "token", "", "an access `TOKEN` every tool uses (default: $GITEA_TOKEN, then $GITHUB_TOKEN); never a tool's argument")
	fs.StringVar(&o.repo, "repo", "", "the repository, `OWNER/NAME`, of a call that names none")
	fs.StringVar(&o.ledgerKeyEnv, "ledger-key-env", "", "the environment variable (its `NAME`) holding the guard's ledger-key, to verify its "+
		"ledger on every call (default: trusted by author and marker)")
	fs.StringVar(&o.format, "format", "text", "how an error that stops the server before it serves is printed: `text|json` (the tools always "+
		"answer in JSON)")
	fs.StringVar(&o.root, "root", "", "the `FOLDER` the tools' file arguments must lie in (default: the working directory)")
	return o
}

func (o *mcpOptions) validate(_ *flag.FlagSet, pos []string, env Env) error {
	if err := noArgs("mcp", pos); err != nil {
		return err
	}
	if err := checkFormat("mcp", o.format); err != nil {
		return err
	}
	if o.repo != "" {
		f := issueFlags{repo: o.repo}
		if err := f.checkRepo("mcp", false); err != nil {
			return err
		}
	}
	// A placeholder token would fail every call with a 401 that blames
	// the token: refuse to serve, saying so.
	if token, source := live.Token(o.token, env.Getenv); token != "" {
		if err := live.NotPlaceholder("mcp", "the token from "+source, token); err != nil {
			return err
		}
	}
	if o.server != "" {
		if err := live.NotPlaceholder("mcp", "--server", o.server); err != nil {
			return err
		}
	} else if err := live.NotPlaceholder("mcp", "GITHUB_SERVER_URL", env.Getenv("GITHUB_SERVER_URL")); err != nil {
		return err
	}
	if o.ledgerKeyEnv != "" && env.Getenv(o.ledgerKeyEnv) == "" {
		return usageError("mcp: --ledger-key-env %s: the variable is empty or not set", o.ledgerKeyEnv)
	}
	root, err := mcpserver.Root(o.root)
	if err != nil {
		return usageError("mcp: --root %s: %v", o.root, err)
	}
	o.root = root
	return nil
}

// serveMCP is runMCP, which the verb table reaches through this variable:
// runMCP reads the verb table, and a verb's run step that names it
// directly would make the table's initialization depend on itself.
var serveMCP func(context.Context, *mcpOptions, Env) error

func init() { serveMCP = runMCP }

// mcpVerb is the run step of `mcp`.
func mcpVerb(ctx context.Context, o *mcpOptions, env Env) error { return serveMCP(ctx, o, env) }

// runMCP serves the tools over standard input and output until the
// client closes standard input. Nothing else is printed on standard
// output: the protocol owns it; the log goes to standard error.
func runMCP(ctx context.Context, o *mcpOptions, env Env) error {
	opts, err := o.serverOptions(env)
	if err != nil {
		return err
	}
	if err := mcpserver.Serve(ctx, env.Stdin, env.Stdout, opts); err != nil {
		return cannotRun(err)
	}
	return nil
}

// serverOptions is the server's configuration: a tool per agent-facing verb,
// made from the verb table, each call run by Main with the server's
// connection.
func (o *mcpOptions) serverOptions(env Env) (mcpserver.Options, error) {
	opts := mcpserver.Options{
		Name:     "gns-guard",
		Version:  version.Info().Version,
		Run:      o.runner(env),
		Fixed:    map[string]string{"format": "json"},
		Omit:     []string{"server", "token", "ledger-key-env"},
		Defaults: map[string]string{"repo": o.repo},
		Secrets:  o.secrets(env),
		Log:      env.Stderr,
	}
	if o.ledgerKeyEnv != "" {
		opts.Fixed["ledger-key-env"] = o.ledgerKeyEnv
	}
	for _, t := range mcpTools {
		v, ok := verbNamed(t.name)
		if !ok {
			return opts, cannotRun(fmt.Errorf("mcp: no verb %s to serve", t.name))
		}
		fs := newFlags(v, env)
		v.flags(fs)
		var required []string
		if len(v.required) == 1 {
			required = v.required[0] // alternatives: none is required alone
		}
		opts.Tools = append(opts.Tools, mcpserver.Tool{
			Name: t.name, Description: t.about, Required: required, Flags: fs,
			File: t.file, FileDescription: "the issue body (or a bare checkpoint)", Offline: t.offline, ArrayKey: t.arrayKey,
		})
	}
	return opts, nil
}

// runner runs a tool's command line through Main, as the command line
// runs it, with the server's connection in the environment.
func (o *mcpOptions) runner(base Env) mcpserver.Runner {
	return func(ctx context.Context, args []string, stdin string) (int, []byte, []byte) {
		var out, errOut bytes.Buffer
		env := base
		env.ReadFile = mcpserver.ConfinedRead(o.root, maxInput, errTooLarge, base.ReadFile)
		env.Stdin = strings.NewReader(stdin)
		env.Stdout, env.Stderr = &out, &errOut
		env.Getenv = func(k string) string {
			switch {
			case k == "GITHUB_SERVER_URL" && o.server != "":
				return o.server
			case k == "GITEA_TOKEN" && o.token != "":
				return o.token
			}
			return base.Getenv(k)
		}
		code := Main(ctx, args, env)
		return code, out.Bytes(), errOut.Bytes()
	}
}

// secrets are the values no result or log line may show: the tokens and
// the ledger keys the server can reach.
func (o *mcpOptions) secrets(env Env) []string {
	var out []string
	for _, s := range []string{o.token, env.Getenv("GITEA_TOKEN"), env.Getenv("GITHUB_TOKEN"), env.Getenv(LedgerKeyEnv),
		env.Getenv("GNS_GUARD_ADMIN_TOKEN"), env.Getenv(o.ledgerKeyEnv)} {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
