package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gns-guard/gns-guard/internal/metering"
	"github.com/gns-guard/gns-guard/internal/offline"
)

// MeterKeyEnv holds the meter-key secret that signs receipts (never a
// flag: a flag shows in the process list).
const MeterKeyEnv = "GNS_GUARD_METER_KEY"

// meterOptions are the parsed flags of `meter`.
type meterOptions struct {
	listen, server, store         string
	openaiURL, anthropicURL       string
	openaiKeyEnv, anthropicEnv    string
	metricsTokenEnv, gateTokenEnv string
	issueTTL, drain, hangup       time.Duration
	maxTokens                     int64
	publicKey, metricsIssue       bool
	format                        string
	scope                         scopeList
}

// scopeList is --scope: owners and repositories, each checked as it is
// given.
type scopeList []string

func (s *scopeList) String() string { return strings.Join(*s, ",") }
func (s *scopeList) Set(v string) error {
	o, n, whole := strings.Cut(strings.TrimSpace(v), "/")
	if o == "" || whole && (n == "" || strings.Contains(n, "/")) {
		return fmt.Errorf("want OWNER or OWNER/NAME, got %q", v)
	}
	*s = append(*s, strings.TrimSpace(v))
	return nil
}

// meterFlags declares the flags of `meter`.
func meterFlags(fs *flag.FlagSet) options {
	o := &meterOptions{}
	fs.StringVar(&o.listen, "listen", ":8787", "the `ADDRESS` to serve on")
	fs.StringVar(&o.server, "server", "", "the Gitea server's `URL` (default: $GITHUB_SERVER_URL)")
	fs.Var(&o.scope, "scope", "an owner (`OWNER`) or a repository (OWNER/NAME) the meter serves: "+
		"its provider keys pay for their calls alone (repeatable; at least one)")
	fs.StringVar(&o.store, "store", "gns-guard-meter.db", "the store: a SQLite `FILE`, or postgres://... for meters that share one")
	fs.StringVar(&o.openaiURL, "openai-url", "https://api.openai.com", "the OpenAI-compatible server's `URL`, before /v1")
	fs.StringVar(&o.anthropicURL, "anthropic-url", "https://api.anthropic.com", "the Anthropic server's `URL`, before /v1")
	fs.StringVar(&o.openaiKeyEnv, "openai-key-env", "OPENAI_API_KEY", "the environment `VARIABLE` holding the OpenAI key")
	fs.StringVar(&o.anthropicEnv, "anthropic-key-env", "ANTHROPIC_API_KEY", "the environment `VARIABLE` holding the Anthropic key")
	fs.BoolVar(&o.metricsIssue, "metrics-issue", false, "the issue as a label of the spend metrics (a label set an issue: the operator's choice)")
	fs.StringVar(&o.metricsTokenEnv, "metrics-token-env", "", "the environment `VARIABLE` holding the bearer token GET /metrics asks for "+
		"(default: no /metrics, it answers 404)")
	fs.StringVar(&o.gateTokenEnv, "gate-token-env", "", "the environment `VARIABLE` holding the gate account's Gitea token: "+
		"the meter then also serves the gate, through which agents holding read access write (default: no gate; docs/gate.md)")
	fs.DurationVar(&o.issueTTL, "issue-ttl", metering.DefaultIssueTTL, "how long an issue's reading is kept (a `DURATION`)")
	fs.DurationVar(&o.hangup, "hangup-read", metering.DefaultHangupRead,
		"how long the answer of a call whose client hung up is still read, to charge what the provider charged "+
			"(a `DURATION`; past it, the call is charged its worst case)")
	fs.DurationVar(&o.drain, "drain", 5*time.Minute, "how long calls in flight may finish after SIGTERM (a `DURATION`)")
	fs.Int64Var(&o.maxTokens, "max-tokens", metering.DefaultMaxTokens, "the answer's cap in tokens (`N`) added to a request that sets none")
	fs.StringVar(&o.format, "format", "text", "output format of --public-key and of errors: `text|json`")
	fs.BoolVar(&o.publicKey, "public-key", false, "print the public key of $"+MeterKeyEnv+" (publish it as meter-public-key) and exit")
	return o
}

func (o *meterOptions) validate(_ *flag.FlagSet, pos []string, _ Env) error {
	if err := noPositional("meter", pos); err != nil {
		return err
	}
	if err := checkFormat("meter", o.format); err != nil {
		return err
	}
	switch {
	case o.issueTTL <= 0 || o.drain <= 0 || o.hangup <= 0:
		return usageError("meter: --issue-ttl, --hangup-read and --drain must be above 0")
	case o.maxTokens < 1:
		return usageError("meter: --max-tokens must be 1 or more")
	}
	return nil
}

// metricsToken is the token GET /metrics asks for: the value of
// --metrics-token-env's variable, "" without the flag (no /metrics).
func (o *meterOptions) metricsToken(env Env) (string, error) {
	if o.metricsTokenEnv == "" {
		return "", nil
	}
	token := strings.TrimSpace(env.Getenv(o.metricsTokenEnv))
	if token == "" {
		return "", usageError("meter: --metrics-token-env %s: $%s is empty: it holds the token GET /metrics asks for", o.metricsTokenEnv, o.metricsTokenEnv)
	}
	return token, nil
}

// noMeter is the answer of a build without the meter.
const noMeter = "meter: this build of gns-guard has no meter (the guard's step image leaves it out to stay small): " +
	"run the meter from a release binary, or from the image built with --build-arg TAGS= (docs/meter.md)"

// MeterStart is what the meter verb starts the meter's server with.
type MeterStart struct {
	Server, Listen, Store string
	// Scope are the owners and repositories whose agents may spend.
	Scope []string
	// The providers before /v1, and the keys that pay for their calls.
	OpenAIURL, AnthropicURL, OpenAIKey, AnthropicKey string
	// Secret is meter-key: it signs receipts and statements.
	Secret                      []byte
	IssueTTL, HangupRead, Drain time.Duration
	MaxTokens                   int64
	// MetricsToken guards GET /metrics ("": none); MetricsIssue labels
	// spend by issue.
	MetricsToken string
	MetricsIssue bool
	// GateToken is the gate account's token ("": no gate).
	GateToken string
	Log       io.Writer
	Now       func() time.Time
}

// runMeter serves the meter until SIGTERM or SIGINT, then lets the calls
// in flight finish (docs/meter.md).
func runMeter(ctx context.Context, o *meterOptions, env Env) error {
	if !o.publicKey && env.Meter == nil {
		return usageError("%s", noMeter)
	}
	secret := []byte(strings.TrimSpace(env.Getenv(MeterKeyEnv)))
	public, err := offline.MeterPublicKey(secret)
	if err != nil {
		return usageError("meter: $%s: %v", MeterKeyEnv, err)
	}
	if o.publicKey {
		if o.format == "json" {
			return printJSON(env, map[string]string{"public_key": public})
		}
		_, err := fmt.Fprintln(env.Stdout, public)
		return err
	}
	server := firstOf(o.server, env.Getenv("GITHUB_SERVER_URL"))
	if server == "" {
		return usageError("meter: no server: pass --server URL or set GITHUB_SERVER_URL")
	}
	if len(o.scope) == 0 {
		return usageError("meter: no --scope: name the owners (--scope acme) or repositories (--scope acme/api) " +
			"whose agents may spend on this meter's provider keys; " +
			"any account on the server could otherwise make a repository and spend on them")
	}
	metricsToken, err := o.metricsToken(env)
	if err != nil {
		return err
	}
	gateToken := ""
	if o.gateTokenEnv != "" {
		if gateToken = strings.TrimSpace(env.Getenv(o.gateTokenEnv)); gateToken == "" {
			return usageError("meter: --gate-token-env %s: $%s is empty: it holds the gate account's Gitea token", o.gateTokenEnv, o.gateTokenEnv)
		}
	}
	return env.Meter(ctx, MeterStart{
		Server: server, Listen: o.listen, Store: o.store, Scope: o.scope,
		OpenAIURL: o.openaiURL, AnthropicURL: o.anthropicURL,
		OpenAIKey: env.Getenv(o.openaiKeyEnv), AnthropicKey: env.Getenv(o.anthropicEnv),
		Secret: secret, IssueTTL: o.issueTTL, HangupRead: o.hangup, Drain: o.drain, MaxTokens: o.maxTokens,
		MetricsToken: metricsToken, MetricsIssue: o.metricsIssue, GateToken: gateToken, Log: env.Stderr, Now: env.Now,
	})
}
