// Calls gns-guard meter with the official OpenAI and Anthropic clients,
// unmodified: a plan on standard input, a transcript on standard output.
// Each call gets a fresh client with the plan's base URL and key; what the
// client saw (its result, its error, the budget headers) is printed as
// JSON.
import OpenAI from "openai";
import Anthropic from "@anthropic-ai/sdk";

const input = await new Promise((resolve) => {
  let s = "";
  process.stdin.on("data", (d) => (s += d));
  process.stdin.on("end", () => resolve(s));
});
const plan = JSON.parse(input);

function budget(headers) {
  const out = {};
  for (const [k, v] of headers.entries()) {
    if (k.startsWith("x-gns-")) out[k] = v;
  }
  return out;
}

async function openai(c) {
  const client = new OpenAI({ baseURL: c.baseURL, apiKey: c.apiKey, defaultHeaders: c.headers, maxRetries: 2 });
  const out = { sdk: "openai", kind: c.kind };
  if (c.kind === "chat" || c.kind === "chat-stream") {
    const { data, response } = await client.chat.completions.create(c.body).withResponse();
    out.headers = budget(response.headers);
    if (c.kind === "chat") {
      out.text = data.choices[0].message.content;
      out.usage = data.usage;
      return out;
    }
    out.text = "";
    out.chunks = 0;
    out.usageChunks = 0;
    out.usageFields = 0;
    for await (const chunk of data) {
      out.chunks++;
      if ("usage" in chunk) out.usageFields++;
      if (chunk.usage) {
        out.usageChunks++;
        out.usage = chunk.usage;
      }
      if (chunk.choices.length > 0) out.text += chunk.choices[0].delta.content ?? "";
    }
    return out;
  }
  if (c.kind === "responses" || c.kind === "responses-stream") {
    const { data, response } = await client.responses.create(c.body).withResponse();
    out.headers = budget(response.headers);
    if (c.kind === "responses") {
      out.text = data.output_text;
      out.usage = data.usage;
      return out;
    }
    out.text = "";
    out.events = 0;
    for await (const ev of data) {
      out.events++;
      if (ev.type === "response.output_text.delta") out.text += ev.delta;
      if (ev.type === "response.completed") out.usage = ev.response.usage;
    }
    return out;
  }
  if (c.kind === "embeddings") {
    const { data, response } = await client.embeddings.create(c.body).withResponse();
    out.headers = budget(response.headers);
    out.usage = data.usage;
    out.dims = data.data[0].embedding.length;
    return out;
  }
  throw new Error("unknown kind " + c.kind);
}

async function anthropic(c) {
  const client = new Anthropic({ baseURL: c.baseURL, apiKey: c.apiKey, authToken: c.authToken, defaultHeaders: c.headers, maxRetries: 2 });
  const out = { sdk: "anthropic", kind: c.kind };
  const { data, response } = await client.messages.create(c.body).withResponse();
  out.headers = budget(response.headers);
  if (c.kind === "messages") {
    out.text = data.content.map((b) => b.text).join("");
    out.usage = data.usage;
    return out;
  }
  out.text = "";
  out.events = 0;
  for await (const ev of data) {
    out.events++;
    if (ev.type === "content_block_delta") out.text += ev.delta.text;
    if (ev.type === "message_delta") out.usage = ev.usage;
  }
  return out;
}

const results = [];
for (const c of plan.calls) {
  try {
    results.push(await (c.sdk === "anthropic" ? anthropic(c) : openai(c)));
  } catch (e) {
    results.push({ sdk: c.sdk, kind: c.kind, error: { name: e.constructor.name, status: e.status ?? null, message: String(e.message), type: e.error?.error?.type ?? e.error?.type ?? null, code: e.code ?? null } });
  }
}
process.stdout.write(JSON.stringify({ results }) + "\n");
