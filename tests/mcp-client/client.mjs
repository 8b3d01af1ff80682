// Drives cortex's MCP server with the official TypeScript SDK, as a real
// third-party client would.
//
//   node client.mjs stdio <cortex-binary> <db-path>
//   node client.mjs http <url> <token>
//
// Lists the tools, calls skill_investigate on the labelled corpus's
// lavra:lavra-plan incident and once with a bad parameter, and prints a
// one-line JSON summary. Exits 1 with a message on any failure, 2 on bad
// usage.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const TIMEOUT_MS = 60_000;

function usage() {
  console.error("usage: node client.mjs stdio <cortex-binary> <db-path>\n       node client.mjs http <url> <token>");
  process.exit(2);
}

function assert(cond, msg) {
  if (!cond) throw new Error(`assertion failed: ${msg}`);
}

function transportFor(mode, a, b) {
  if (mode === "stdio") {
    // The whole environment (the test's HOME, XDG and CORTEX_* variables),
    // not the SDK's short default list.
    const env = Object.fromEntries(Object.entries(process.env).filter(([, v]) => v !== undefined));
    return new StdioClientTransport({ command: a, args: ["--db", b, "mcp"], env, stderr: "inherit" });
  }
  if (mode === "http") {
    return new StreamableHTTPClientTransport(new URL(a), {
      requestInit: { headers: { Authorization: `Bearer ${b}` } },
    });
  }
  usage();
}

function errorBody(result) {
  const text = result.content?.find((c) => c.type === "text")?.text ?? "";
  try {
    return JSON.parse(text).error ?? {};
  } catch {
    throw new Error(`error result is not the {"error":{…}} body: ${text.slice(0, 200)}`);
  }
}

async function main() {
  const [mode, a, b] = process.argv.slice(2);
  if (!mode || !a || !b) usage();
  const transport = transportFor(mode, a, b);
  const client = new Client({ name: "cortex-ts-client-test", version: "1.0.0" });
  const opts = { timeout: TIMEOUT_MS };
  await client.connect(transport, opts);
  try {
    const server = client.getServerVersion();
    assert(server?.name === "cortex", `server name is ${JSON.stringify(server)}`);
    assert((client.getInstructions() ?? "").length > 0, "server sent no instructions");

    const { tools } = await client.listTools({}, opts);
    const names = tools.map((t) => t.name);
    for (const want of ["skill_investigate", "help", "status"]) {
      assert(names.includes(want), `tool ${want} missing from ${names.join(", ")}`);
    }
    for (const t of tools) {
      assert(t.inputSchema?.type === "object", `tool ${t.name} has no object inputSchema`);
      assert(typeof t.description === "string" && t.description.includes("(scope cortex:"), `tool ${t.name} description`);
    }
    const inv = tools.find((t) => t.name === "skill_investigate");
    assert(inv.inputSchema.properties?.skill, "skill_investigate schema lacks the skill parameter");
    assert(inv.annotations?.readOnlyHint === true, "skill_investigate is not marked read-only");

    const res = await client.callTool({ name: "skill_investigate", arguments: { skill: "lavra:lavra-plan" } }, undefined, opts);
    assert(!res.isError, `skill_investigate failed: ${JSON.stringify(res.content)}`);
    const sc = res.structuredContent;
    assert(sc && typeof sc === "object", "skill_investigate returned no structured content");
    assert(sc.evidence?.length === 1, `want 1 evidence bundle, got ${sc.evidence?.length}`);
    const bundle = sc.evidence[0];
    assert(bundle.incident?.skill_name === "lavra:lavra-plan", `incident skill is ${bundle.incident?.skill_name}`);
    const modes = bundle.deterministic_findings?.likely_failure_modes ?? [];
    assert(modes.length > 0, "no deterministic findings");
    const text = res.content?.find((c) => c.type === "text")?.text;
    assert(text && JSON.parse(text).evidence?.length === 1, "text content is not the result's JSON");

    const bad = await client.callTool({ name: "skill_investigate", arguments: { limit: "x" } }, undefined, opts);
    assert(bad.isError === true, "a bad parameter did not give isError");
    const err = errorBody(bad);
    assert(err.code === "invalid" && String(err.message).includes("limit"), `bad-parameter error: ${JSON.stringify(err)}`);

    console.log(
      JSON.stringify({
        ok: true,
        mode,
        server: `${server.name} ${server.version}`,
        tools: names.length,
        incident: bundle.incident.incident_id,
        skill: bundle.incident.skill_name,
        failure_modes: modes.map((m) => m.category),
        bad_param_error: err.code,
      }),
    );
  } finally {
    await client.close();
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(`mcp-client: FAIL: ${e?.message ?? e}`);
    process.exit(1);
  },
);
