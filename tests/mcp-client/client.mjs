// Drives cortex's MCP server with the official TypeScript SDK, as a real
// third-party client would.
//
//   node client.mjs stdio <cortex-binary> <db-path>
//   node client.mjs http <url> <token>
//
// Lists the tools (checking their size, output schemas and that admin
// tools and folded actions are hidden from this read-only client), calls
// investigate on the labelled corpus's lavra:lavra-plan incident (summary,
// then detail; the SDK checks each result against the tool's output
// schema), incidents with the older parameter name tool, every view of the
// folded tools events and skill (their output schemas are anyOf one branch
// per view), and investigate and the folds with bad parameters, and prints
// a one-line JSON summary. Exits 1 with a message on any failure, 2 on bad
// usage.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { fileURLToPath } from "node:url";

// A SKILL.md for skill view=propose (the labelled corpus's skills are not
// installed on the test machine); a remote caller may name only such a file.
const SKILL_FILE = fileURLToPath(new URL("../../lifecycle/testdata/using-entire/SKILL.md", import.meta.url));

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

    const listed = await client.listTools({}, opts);
    const { tools } = listed;
    const listBytes = Buffer.byteLength(JSON.stringify(listed));
    assert(listBytes <= 14 * 1024, `tools/list is ${listBytes} bytes (~${Math.round(listBytes / 4)} tokens), over 14 KB`);
    const names = tools.map((t) => t.name);
    for (const want of ["incidents", "investigate", "session_show", "status", "events", "skill"]) {
      assert(names.includes(want), `tool ${want} missing from ${names.join(", ")}`);
    }
    for (const hidden of ["llm_invocations", "skills_backfill", "skill_investigate", "skill_assess", "help", "skill_events",
      "mcp_events", "abuse", "skill_health", "skill_evals"]) {
      assert(!names.includes(hidden), `tool ${hidden} listed to a read-only client`);
    }
    for (const t of tools) {
      assert(t.inputSchema?.type === "object", `tool ${t.name} has no object inputSchema`);
      assert(t.outputSchema?.type === "object" && (t.outputSchema.properties || t.outputSchema.anyOf),
        `tool ${t.name} has no outputSchema`);
      assert(typeof t.description === "string" && t.description.length > 0, `tool ${t.name} description`);
    }
    const inv = tools.find((t) => t.name === "investigate");
    assert(inv.inputSchema.properties?.skill && inv.inputSchema.properties?.detail, "investigate lacks skill or detail");
    assert(inv.inputSchema.properties?.agent?.enum?.includes("codex"), "agent is not an enum");
    assert(inv.annotations?.readOnlyHint === true, "investigate is not marked read-only");

    // The SDK validates structured content against the output schema.
    const res = await client.callTool({ name: "investigate", arguments: { skill: "lavra:lavra-plan" } }, undefined, opts);
    assert(!res.isError, `investigate failed: ${JSON.stringify(res.content)}`);
    const sc = res.structuredContent;
    assert(sc && typeof sc === "object", "investigate returned no structured content");
    assert(sc.detail === false && sc.evidence === undefined, "investigate is not a summary by default");
    assert(sc.evidence_summary?.length === 1, `want 1 summary, got ${sc.evidence_summary?.length}`);
    const summary = sc.evidence_summary[0];
    assert(summary.incident?.skill_name === "lavra:lavra-plan", `incident skill is ${summary.incident?.skill_name}`);
    const modes = summary.deterministic_findings?.likely_failure_modes ?? [];
    assert(modes.length > 0, "no deterministic findings");
    assert(Object.keys(summary.evidence_counts ?? {}).length > 0, "no evidence counts");
    const text = res.content?.find((c) => c.type === "text")?.text;
    assert(text && JSON.parse(text).evidence_summary?.length === 1, "text content is not the result's JSON");

    const full = await client.callTool(
      { name: "investigate", arguments: { incident_id: summary.incident.incident_id, detail: true } }, undefined, opts);
    assert(!full.isError && full.structuredContent.evidence?.length === 1, "investigate detail by id failed");
    const fullBytes = Buffer.byteLength(full.content[0].text);
    assert(fullBytes > Buffer.byteLength(text), `detail (${fullBytes} B) is not larger than the summary`);

    const byAlias = await client.callTool({ name: "incidents", arguments: { tool: "claude", lens: ["skill"] } }, undefined, opts);
    assert(!byAlias.isError && byAlias.structuredContent.incidents.every((i) => i.ai_tool === "claude" && i.lens === "skill"),
      `incidents with tool=claude: ${JSON.stringify(byAlias.content).slice(0, 200)}`);

    // The folded tools: every view answers, and the SDK checks each result
    // against the fold's output schema (anyOf one branch per view).
    const views = {};
    for (const [tool, param] of [["events", "kind"], ["skill", "view"]]) {
      const t = tools.find((x) => x.name === tool);
      const values = t.inputSchema.properties?.[param]?.enum ?? [];
      assert(values.length > 1 && t.inputSchema.required?.includes(param), `${tool}: selector ${param} ${JSON.stringify(values)}`);
      assert(t.outputSchema.anyOf?.length > 1, `${tool}: output schema is not one branch per view`);
      for (const v of values) {
        const args = { [param]: v };
        if (tool === "skill" && v !== "health") args.skill = "lavra:lavra-plan";
        if (v === "propose") args.file = SKILL_FILE;
        const r = await client.callTool({ name: tool, arguments: args }, undefined, opts);
        const what = `${tool} ${param}=${v}`;
        assert(!r.isError, `${what} failed: ${JSON.stringify(r.content).slice(0, 300)}`);
        assert(r.structuredContent && typeof r.structuredContent === "object", `${what}: no structured content`);
        views[`${tool}:${v}`] = Object.keys(r.structuredContent).length;
      }
    }
    const health = await client.callTool({ name: "skill", arguments: { view: "health", limit: 1 } }, undefined, opts);
    assert(health.structuredContent.skills?.length === 1 && health.structuredContent.skills[0].grade,
      `skill view=health: ${JSON.stringify(health.structuredContent).slice(0, 200)}`);
    const wrongView = errorBody(await client.callTool({ name: "skill", arguments: { view: "health", diff: true } }, undefined, opts));
    assert(wrongView.code === "invalid" && String(wrongView.message).includes("skill view=health: unknown parameter"),
      `a parameter of another view: ${JSON.stringify(wrongView)}`);
    const noKind = errorBody(await client.callTool({ name: "events", arguments: {} }, undefined, opts));
    assert(noKind.code === "invalid" && String(noKind.message).includes("kind"), `events without kind: ${JSON.stringify(noKind)}`);

    const bad = await client.callTool({ name: "investigate", arguments: { limit: "x" } }, undefined, opts);
    assert(bad.isError === true, "a bad parameter did not give isError");
    const err = errorBody(bad);
    assert(err.code === "invalid" && String(err.message).includes("limit"), `bad-parameter error: ${JSON.stringify(err)}`);

    console.log(
      JSON.stringify({
        ok: true,
        mode,
        server: `${server.name} ${server.version}`,
        tools: names.length,
        tools_list_bytes: listBytes,
        tools_list_tokens: Math.round(listBytes / 4),
        incident: summary.incident.incident_id,
        skill: summary.incident.skill_name,
        summary_bytes: Buffer.byteLength(text),
        detail_bytes: fullBytes,
        failure_modes: modes.map((m) => m.category),
        fold_views: Object.keys(views).length,
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
