// `harness mcp` against the official TypeScript MCP SDK client
// (@modelcontextprotocol/sdk 1.32.2, the family Claude Code, Gemini CLI and
// Cursor are built on), over its stdio transport.
//
//     node check_typescript.mjs PATH/TO/harness
//
// It runs from the folder the SDK is installed in (tests/mcp/run.sh copies
// it there). Every check gets a server of its own over a fresh temporary
// workspace; results are compared whole with what `harness call` prints
// for the same call. The last line is "N passed, N failed"; the exit code is
// 1 when a check failed.

import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { isDeepStrictEqual } from "node:util";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";

const HARNESS = resolve(process.argv[2]);
const TOOLS = ["read", "bash", "edit", "write", "grep", "find", "ls"];
// A 2x1 PNG (red, blue), as read sends it back unchanged.
const PNG_BASE64 =
  "iVBORw0KGgoAAAANSUhEUgAAAAIAAAABCAIAAAB7QOjdAAAAEElEQVR4nGP4z8DAwMDAAAANAgGBJbkpAAAAAElFTkSuQmCC";
const HINTS = {
  read: [true, false, true, false],
  grep: [true, false, true, false],
  find: [true, false, true, false],
  ls: [true, false, true, false],
  write: [false, true, true, false],
  edit: [false, true, false, false],
  bash: [false, true, false, true],
};

function expect(actual, wanted, what) {
  if (!isDeepStrictEqual(actual, wanted)) {
    throw new Error(
      `${what}:\n  expected: ${JSON.stringify(wanted)}\n  actual:   ${JSON.stringify(actual)}`,
    );
  }
}

function harnessCall(workspace, tool, args) {
  const out = execFileSync(HARNESS, ["call", "--no-sandbox", tool, JSON.stringify(args), "--cwd", workspace]);
  return JSON.parse(out.toString());
}

function asHarness(result) {
  return {
    is_error: result.isError ?? false,
    content: result.content.map((block) =>
      block.type === "text"
        ? { type: "text", text: block.text }
        : block.type === "image"
          ? { type: "image", data: block.data, mime_type: block.mimeType }
          : { type: block.type },
    ),
    details: result._meta?.["harness/details"] ?? null,
  };
}

function pidAlive(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0] !== "Z";
  } catch {
    return false;
  }
}

async function waitUntil(condition, what, timeoutMs = 10000) {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

class Session {
  constructor() {
    this.root = mkdtempSync(join(tmpdir(), "harness-mcp-ts-"));
    this.workspace = join(this.root, "ws");
    mkdirSync(this.workspace);
    this.clients = [];
  }

  async connect(command = HARNESS, args = ["mcp", "--no-sandbox", "--cwd", this.workspace]) {
    const client = new Client({ name: "harness-check", version: "1.0.0" });
    await client.connect(new StdioClientTransport({ command, args, stderr: "inherit" }));
    this.clients.push(client);
    return client;
  }

  async cleanup() {
    for (const client of this.clients) await client.close();
    rmSync(this.root, { recursive: true, force: true });
  }
}

const checks = {
  async the_tool_list(s) {
    const client = await s.connect();
    const { tools } = await client.listTools();
    const reference = JSON.parse(execFileSync(HARNESS, ["tools", "--json"]).toString());
    expect(tools.map((t) => t.name), TOOLS, "tool names in prompt order");
    tools.forEach((tool, i) => {
      expect(
        [tool.name, tool.description, tool.inputSchema],
        [reference[i].name, reference[i].description, reference[i].parameters],
        `definition of ${tool.name} against harness tools --json`,
      );
      const a = tool.annotations;
      expect(
        [a.readOnlyHint, a.destructiveHint, a.idempotentHint, a.openWorldHint],
        HINTS[tool.name],
        `hints of ${tool.name}`,
      );
      expect(tool.outputSchema, undefined, `${tool.name} has no output schema`);
    });
  },

  async read_text_image_missing_outside_and_invalid(s) {
    writeFileSync(join(s.workspace, "notes.txt"), "one\ntwo\n");
    writeFileSync(join(s.workspace, "pixel.png"), Buffer.from(PNG_BASE64, "base64"));
    writeFileSync(join(s.root, "secret.txt"), "outside\n");
    const client = await s.connect();
    const calls = [
      ["read", { path: "notes.txt" }, false],
      ["read", { path: "pixel.png" }, false],
      ["read", { path: "missing.txt" }, true],
      ["read", { path: "../secret.txt" }, true],
      ["read", { path: join(s.root, "secret.txt") }, true],
      ["read", { path: 5 }, true],
    ];
    for (const [name, args, isError] of calls) {
      const result = await client.callTool({ name, arguments: args });
      const got = asHarness(result);
      expect(got, harnessCall(s.workspace, name, args), `${name} ${JSON.stringify(args)}`);
      expect(got.is_error, isError, `isError of ${name} ${JSON.stringify(args)}`);
      expect(result.structuredContent, undefined, "no structuredContent");
    }
    const png = await client.callTool({ name: "read", arguments: { path: "pixel.png" } });
    expect(
      png.content.filter((b) => b.type === "image").map((b) => [b.mimeType, b.data]),
      [["image/png", PNG_BASE64]],
      "the PNG as one image block",
    );
    const invalid = await client.callTool({ name: "read", arguments: { path: 5 } });
    expect(
      invalid.content[0].text.split("\n").slice(0, 2),
      ['Validation failed for tool "read":', "  - /path: expected a string, received number 5"],
      "the validation error names the field",
    );
  },

  async an_unknown_tool_is_a_json_rpc_error(s) {
    const client = await s.connect();
    try {
      await client.callTool({ name: "nope", arguments: {} });
    } catch (err) {
      if (!(err instanceof McpError)) throw err;
      expect(err.code, -32602, "error code");
      expect(
        err.data,
        { available_tools: TOOLS },
        "error data",
      );
      return;
    }
    throw new Error("calling an unknown tool raised no McpError");
  },

  async an_edit_lands_on_disk(s) {
    writeFileSync(join(s.workspace, "a.py"), "x = 1\ny = 2\n");
    const client = await s.connect();
    const result = await client.callTool({
      name: "edit",
      arguments: { path: "a.py", edits: [{ oldText: "y = 2", newText: "y = 3" }] },
    });
    expect(result.isError, false, "isError");
    expect(readFileSync(join(s.workspace, "a.py"), "utf8"), "x = 1\ny = 3\n", "the file");
  },

  async ten_concurrent_writes_and_ten_concurrent_edits_of_one_file(s) {
    const lines = Array.from({ length: 10 }, (_, i) => `line ${i}: old\n`).join("");
    writeFileSync(join(s.workspace, "shared.txt"), lines);
    const client = await s.connect();
    const writes = Array.from({ length: 10 }, (_, i) =>
      client.callTool({ name: "write", arguments: { path: `dir/f${i}.txt`, content: `file ${i}\n` } }),
    );
    const edits = Array.from({ length: 10 }, (_, i) =>
      client.callTool({
        name: "edit",
        arguments: {
          path: "shared.txt",
          edits: [{ oldText: `line ${i}: old`, newText: `line ${i}: new` }],
        },
      }),
    );
    const results = await Promise.all([...writes, ...edits]);
    expect(results.map((r) => r.isError), Array(20).fill(false), "isError of the 20 calls");
    expect(
      Array.from({ length: 10 }, (_, i) => readFileSync(join(s.workspace, `dir/f${i}.txt`), "utf8")),
      Array.from({ length: 10 }, (_, i) => `file ${i}\n`),
      "the ten written files",
    );
    expect(
      readFileSync(join(s.workspace, "shared.txt"), "utf8"),
      Array.from({ length: 10 }, (_, i) => `line ${i}: new\n`).join(""),
      "the file after ten edits",
    );
  },

  async bash_with_a_progress_token_sends_progress(s) {
    const client = await s.connect();
    const seen = [];
    const command = "for i in 1 2 3 4 5 6; do echo step$i; sleep 0.3; done";
    const result = await client.callTool({ name: "bash", arguments: { command } }, undefined, {
      onprogress: (p) => seen.push(p),
    });
    expect(result.content[0].text, "step1\nstep2\nstep3\nstep4\nstep5\nstep6\n", "the output");
    if (seen.length < 2) throw new Error(`expected at least 2 progress notifications: ${JSON.stringify(seen)}`);
    const numbers = seen.map((p) => p.progress);
    expect(numbers, [...new Set(numbers)].sort((a, b) => a - b), "progress strictly increasing");
    expect(seen.every((p) => p.message?.startsWith("step1\n")), true, "messages carry the tail");
  },

  async a_cancelled_long_bash_is_killed_and_the_server_goes_on(s) {
    const client = await s.connect();
    const pidFile = join(s.workspace, "sleep.pid");
    const abort = new AbortController();
    const call = client.callTool(
      { name: "bash", arguments: { command: "sleep 1000 & echo $! > sleep.pid; wait" } },
      undefined,
      { signal: abort.signal },
    );
    // The SDK sends notifications/cancelled and rejects the call at once
    // with the abort's reason (code -32001, its "request timeout").
    const settled = call.then(
      () => "resolved",
      (err) => [err.code, err.message],
    );
    await waitUntil(() => existsSync(pidFile) && readFileSync(pidFile, "utf8").trim(), "sleep.pid");
    const pid = Number(readFileSync(pidFile, "utf8"));
    expect(pidAlive(pid), true, "the command runs");
    abort.abort("stop");
    expect(await settled, [-32001, "MCP error -32001: stop"], "the aborted call");
    await waitUntil(() => !pidAlive(pid), `process ${pid} to be killed`);
    const after = await client.callTool({ name: "ls", arguments: {} });
    expect(asHarness(after).content, [{ type: "text", text: "sleep.pid" }], "ls after the cancel");
  },

  async stdin_eof_ends_the_server_with_nothing_left_behind(s) {
    const codeFile = join(s.root, "exit.code");
    const client = await s.connect("/bin/sh", [
      "-c",
      '"$0" mcp --no-sandbox --cwd "$1"; echo $? > "$2"',
      HARNESS,
      s.workspace,
      codeFile,
    ]);
    const result = await client.callTool({
      name: "bash",
      arguments: { command: "sleep 1000 & echo $!" },
    });
    const pid = Number(result.content[0].text.trim());
    expect(pidAlive(pid), true, "the background command runs");
    const started = Date.now();
    await client.close();
    const took = Date.now() - started;
    expect(readFileSync(codeFile, "utf8"), "0\n", "the server's exit status after stdin closed");
    if (took >= 2000) throw new Error(`the server took ${took} ms to exit after stdin closed`);
    await waitUntil(() => !pidAlive(pid), `background process ${pid} to be gone`);
  },
};

let passed = 0;
let failed = 0;
for (const [name, check] of Object.entries(checks)) {
  const session = new Session();
  try {
    await check(session);
    passed += 1;
    console.log(`ok   typescript ${name}`);
  } catch (err) {
    failed += 1;
    console.log(`FAIL typescript ${name}\n${err.stack ?? err}`);
  } finally {
    await session.cleanup();
  }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
