package meter

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gns-guard/gns-guard/internal/meterclient"
	"github.com/gns-guard/gns-guard/internal/metering"
	"github.com/gns-guard/gns-guard/internal/version"
)

// The gate's MCP tools take the repository and issue with the request
// the HTTP endpoint takes (docs/gate.md#mcp).
type (
	mcpWhere struct {
		Repo  string `json:"repo" jsonschema:"the repository, OWNER/NAME"`
		Issue int64  `json:"issue" jsonschema:"the issue's number"`
	}
	mcpSpawn struct {
		mcpWhere
		meterclient.GateSpawn
	}
	mcpReport struct {
		mcpWhere
		meterclient.GateReport
	}
	mcpSubIssue struct {
		mcpWhere
		meterclient.GateSubIssue
	}
)

// gateMCP serves the tools spawn, report and context over MCP's
// streamable HTTP; each call authenticates with its request's token.
func (m *Meter) gateMCP() http.Handler {
	srv := mcp.NewServer(&mcp.Implementation{Name: "gns-guard-gate", Version: version.String()}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "spawn", Description: "Open an invocation: a root for your own agent (no parent), or a sub-agent " +
		"under a parent invocation you hold. Refused past the cascade limit, for an agent not allowed, or an estimate over half of what remains."},
		func(ctx context.Context, req *mcp.CallToolRequest, in mcpSpawn) (*mcp.CallToolResult, any, error) {
			out, ref := m.spawn(ctx, mcpAsk(req, in.mcpWhere), in.GateSpawn)
			return toolResult(out, ref, nil)
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "report", Description: "Report an invocation's result: the gate judges it as the guard would " +
		"and writes it for you, or refuses it with the guard's findings and writes nothing."},
		func(ctx context.Context, req *mcp.CallToolRequest, in mcpReport) (*mcp.CallToolResult, any, error) {
			res, ref := m.report(ctx, mcpAsk(req, in.mcpWhere), in.GateReport)
			return toolResult(map[string]any{"result": res}, ref, res)
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "subissue", Description: "Open a sub-issue under an invocation you hold: its own task and budget " +
		"(at most half of what remains), one level deeper, for an agent allowed; the gate writes it."},
		func(ctx context.Context, req *mcp.CallToolRequest, in mcpSubIssue) (*mcp.CallToolResult, any, error) {
			out, ref := m.subIssue(ctx, mcpAsk(req, in.mcpWhere), in.GateSubIssue)
			return toolResult(out, ref, nil)
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "context", Description: "The issue's entry load: what an agent reads before it starts."},
		func(ctx context.Context, req *mcp.CallToolRequest, in mcpWhere) (*mcp.CallToolResult, any, error) {
			text, ref := m.entryLoad(ctx, mcpAsk(req, in))
			return toolResult(map[string]any{"issue": in.Issue, "context": text}, ref, nil)
		})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
}

// mcpAsk is a tool call's ask: its bearer token and the issue it names
// (a malformed OWNER/NAME fails the scope check).
func mcpAsk(req *mcp.CallToolRequest, w mcpWhere) gateAsk {
	a := gateAsk{n: w.Issue}
	a.owner, a.name, _ = strings.Cut(strings.TrimSpace(w.Repo), "/")
	if req.Extra != nil && req.Extra.Header != nil {
		a.token = agentToken(&http.Request{Header: req.Extra.Header})
	}
	return a
}

// toolResult is a tool's answer: out, or the refusal as an error result
// holding result (a refused report's findings) too.
func toolResult(out any, ref *metering.Refusal, result any) (*mcp.CallToolResult, any, error) {
	if ref == nil {
		return nil, out, nil
	}
	data, _ := json.Marshal(map[string]any{"error": meterclient.GateRefusal{Rule: ref.Rule, Message: ref.Message}, "result": result})
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(data)}}}, nil, nil
}
