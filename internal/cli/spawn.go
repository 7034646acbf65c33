package cli

import (
	"context"
	"flag"
	"fmt"

	"github.com/gns-guard/gns-guard/internal/agentwrite"
	"github.com/gns-guard/gns-guard/internal/live"
)

type spawnOptions struct {
	issueFlags
	sp     agentwrite.Spawn
	format string
}

func spawnFlags(fs *flag.FlagSet) options {
	o := &spawnOptions{}
	o.issueFlags.add(fs)
	fs.StringVar(&o.sp.Agent, "agent", "", "the `NAME` of the agent the invocation runs: yours for a root, the sub-agent's under --parent")
	fs.StringVar(&o.sp.Parent, "parent", "", "the parent invocation's `ID`, one you hold (default: a root at the checkpoint's depth)")
	fs.Int64Var(&o.sp.Estimate, "estimate", -1, "the invocation's estimated `TOKENS`: at most half of what remains for a sub-agent")
	fs.StringVar(&o.format, "format", "text", "output format: `text|json`")
	return o
}

func (o *spawnOptions) validate(_ *flag.FlagSet, pos []string, _ Env) error {
	if err := noPositional("spawn", pos); err != nil {
		return err
	}
	switch {
	case o.sp.Agent == "":
		return usageError("spawn: --agent NAME is required")
	case o.sp.Estimate < 0:
		return usageError("spawn: --estimate TOKENS (a whole number >= 0) is required")
	}
	return checkFormat("spawn", o.format)
}

// runSpawn asks the gate to open an invocation (docs/gate.md#spawn) and
// prints it with the providers' base URLs its calls use.
func runSpawn(ctx context.Context, o *spawnOptions, env Env) error {
	rd, err := o.open("spawn", env)
	if err != nil {
		return err
	}
	set, err := o.resolve(ctx, "spawn", env, rd)
	if err != nil {
		return err
	}
	token, _ := live.Token(o.token, env.Getenv)
	gate, err := agentwrite.GateOf("spawn", agentwrite.Conn{Reader: rd, Config: set.Config}, token)
	if err != nil {
		return err
	}
	out, err := gate.Spawn(ctx, o.issue, o.sp)
	if err != nil {
		return err
	}
	if o.format == "json" {
		return printIndented(env, out)
	}
	parent := "a root"
	if out.Parent != "" {
		parent = "under " + out.Parent
	}
	fmt.Fprintf(env.Stdout, "invocation %s: agent %s at depth %d, %s; estimate %d of %d remaining\n",
		out.Invocation, out.Agent, out.Depth, parent, out.Estimate, out.Remaining)
	fmt.Fprintf(env.Stdout, "OPENAI_BASE_URL=%s\nANTHROPIC_BASE_URL=%s\n", out.BaseURLs["openai"], out.BaseURLs["anthropic"])
	return nil
}
