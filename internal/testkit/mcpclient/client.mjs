// Drives an MCP server over stdio with the official TypeScript SDK's
// client: connects (initialize), lists the tools, makes the calls of a
// plan in order, and prints one JSON document of everything the client
// saw. It judges nothing: the Go test that runs it does.
//
// Usage: node client.mjs PLAN.json
//
//	PLAN: {"command": "...", "args": [...], "env": {...},
//	       "calls": [{"name": "...", "arguments": {...}}, ...]}
//	or, a server over streamable HTTP: {"url": "...", "headers": {...}, "calls": [...]}
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const plan = JSON.parse(readFileSync(process.argv[2], "utf8"));
const transport = plan.url
  ? new StreamableHTTPClientTransport(new URL(plan.url), { requestInit: { headers: plan.headers ?? {} } })
  : new StdioClientTransport({
      command: plan.command,
      args: plan.args,
      env: plan.env,
      stderr: "pipe",
    });
const stderr = [];
transport.stderr?.on("data", (d) => stderr.push(d.toString()));
const transportErrors = [];
const client = new Client({ name: "gns-guard-test-client", version: "1.0.0" });
client.onerror = (e) => transportErrors.push(String(e));

await client.connect(transport);
const out = {
  server: client.getServerVersion(),
  capabilities: client.getServerCapabilities(),
  tools: (await client.listTools()).tools,
  calls: [],
};
for (const c of plan.calls) {
  try {
    out.calls.push({ ...c, result: await client.callTool({ name: c.name, arguments: c.arguments }) });
  } catch (e) {
    out.calls.push({ ...c, error: { code: e.code, message: String(e.message) } });
  }
}
await client.close();
out.stderr = stderr.join("").split("\n").filter((l) => l !== "");
out.transportErrors = transportErrors;
process.stdout.write(JSON.stringify(out) + "\n");
