// Drive Sentinel with the TypeScript SDK client (what the Inspector, Claude Desktop and VS Code build on).
// usage: node sdk_client.mjs <plan.json>
// plan: {"server": {"command": ..., "args": [...]} | {"url": ..., "headers": {...}}, "elicit": "none"|"accept"|"decline",
//        "calls": [{"name": ..., "arguments": {...}}]}
// Prints one JSON line per call: {name, threw, error, isError, text, meta, structuredContent}.
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const plan = JSON.parse(readFileSync(process.argv[2], "utf8"));
const capabilities = plan.elicit === "none" ? {} : { elicitation: {} };
const client = new Client({ name: "ts-sdk-test-client", version: "1.0.0" }, { capabilities });

if (plan.elicit !== "none") {
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    if (plan.elicit === "decline") return { action: "decline" };
    // answer every boolean with true and every other field with its default or a plain string
    const content = {};
    for (const [key, prop] of Object.entries(request.params.requestedSchema?.properties ?? {})) {
      content[key] = prop.type === "boolean" ? true : (prop.default ?? (prop.enum ? prop.enum[0] : "yes"));
    }
    return { action: "accept", content };
  });
}

const transport = plan.server.url
  ? new StreamableHTTPClientTransport(new URL(plan.server.url), { requestInit: { headers: plan.server.headers ?? {} } })
  : new StdioClientTransport({ command: plan.server.command, args: plan.server.args, env: process.env,
                               stderr: "inherit" });
await client.connect(transport);
// listing first: the SDK caches each tool's outputSchema and validates results against it
const tools = await client.listTools();
console.log(JSON.stringify({ listed: tools.tools.map((t) => ({ name: t.name, hasOutputSchema: !!t.outputSchema })) }));
for (const call of plan.calls) {
  try {
    const r = await client.callTool({ name: call.name, arguments: call.arguments ?? {} });
    const text = (r.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
    console.log(JSON.stringify({ name: call.name, threw: false, isError: !!r.isError, text, meta: r._meta ?? null,
                                 structuredContent: r.structuredContent ?? null }));
  } catch (e) {
    console.log(JSON.stringify({ name: call.name, threw: true, error: String(e?.message ?? e) }));
  }
}
await client.close();
