// The TypeScript SDK's own MCP client (@modelcontextprotocol/sdk, stdio), driven by a plan.
//
//   node mcp_client.mjs PLAN.json
//
// PLAN: {"server": {"command", "args", "env"}, "steps": [STEP, ...]}; each STEP is one of
//   {"op": "list"}                               tools/list (the SDK compiles every outputSchema)
//   {"op": "call", "name", "arguments"}          client.callTool: what a host such as the Inspector does
//   {"op": "request", "method", "params"}        a raw request through the SDK's request() (a malformed call)
//   {"op": "raw", "line"}                        one line written straight to the server's stdin
// Prints one JSON object: {"sdkVersion", "serverVersion", "steps": [...], "transportErrors": [...]}.
// Every step's answer is recorded, thrown errors included (as {"threw": {"code", "message"}}), so the
// Python test asserts everything; this script asserts nothing itself.
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";

const plan = JSON.parse(readFileSync(process.argv[2], "utf8"));
const transport = new StdioClientTransport({
  command: plan.server.command,
  args: plan.server.args,
  env: { ...process.env, ...(plan.server.env || {}) },
  stderr: "inherit",
});
const client = new Client({ name: "labkit-interop-ts", version: "1" });
const transportErrors = [];
client.onerror = (err) => transportErrors.push(String(err && err.message ? err.message : err).slice(0, 500));

function threw(err) {
  return { threw: { code: err && err.code !== undefined ? err.code : null, message: String(err && err.message) } };
}

await client.connect(transport);
const out = [];
for (const step of plan.steps) {
  try {
    if (step.op === "list") {
      const listed = await client.listTools();
      const ajv = new AjvJsonSchemaValidator();
      const compiled = listed.tools.map((t) => {
        ajv.getValidator(t.inputSchema); // throws when a schema does not compile
        if (t.outputSchema) ajv.getValidator(t.outputSchema);
        return t.name;
      });
      out.push({ tools: listed.tools, compiled });
    } else if (step.op === "call") {
      out.push({ result: await client.callTool({ name: step.name, arguments: step.arguments }) });
    } else if (step.op === "request") {
      out.push({ result: await client.request({ method: step.method, params: step.params }, CallToolResultSchema) });
    } else if (step.op === "raw") {
      transport._process.stdin.write(step.line + "\n"); // below the SDK: bytes it would never send
      out.push({ written: true });
    } else {
      out.push({ threw: { code: null, message: `unknown op ${step.op}` } });
    }
  } catch (err) {
    out.push(threw(err));
  }
}
await client.close();
const sdk = JSON.parse(readFileSync(new URL("./node_modules/@modelcontextprotocol/sdk/package.json", import.meta.url), "utf8"));
process.stdout.write(
  JSON.stringify({ sdkVersion: sdk.version, serverVersion: client.getServerVersion(), steps: out, transportErrors }) +
    "\n",
);
