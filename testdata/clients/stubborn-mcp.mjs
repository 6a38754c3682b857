// A stdio MCP server that will not go: it answers initialize and
// tools/list (no tools; one, "echo", with --with-tool in its argv), and
// ignores SIGTERM, SIGHUP and the end of its
// stdin — the kind agent clients leave behind when they die without a
// clean shutdown. Its argv carries the test's mark; with PAD=MiB it holds
// that much memory. Run by the real-client tests (cmd/reaper).
import { createInterface } from "node:readline";

process.on("SIGTERM", () => {});
process.on("SIGHUP", () => {});
process.on("SIGPIPE", () => {});
process.stdout.on("error", () => {});
const pad = Number(process.env.PAD || 0);
const held = pad > 0 ? Buffer.alloc(pad << 20, 1) : null;

const rl = createInterface({ input: process.stdin });
rl.on("line", (line) => {
  let msg;
  try {
    msg = JSON.parse(line);
  } catch {
    return;
  }
  if (msg.id === undefined) return; // a notification
  let result = {};
  if (msg.method === "initialize") {
    result = {
      protocolVersion: msg.params?.protocolVersion ?? "2024-11-05",
      capabilities: { tools: {} },
      serverInfo: { name: "stubborn", version: "1.0.0" },
    };
  } else if (msg.method === "tools/list") {
    result = { tools: [] };
    if (process.argv.includes("--with-tool")) {
      // A client's menus change with a tool: Claude Code's /mcp puts
      // "View tools" before "Reconnect".
      result.tools.push({ name: "echo", description: "Echo its text.", inputSchema: { type: "object", properties: { text: { type: "string" } } } });
    }
  }
  try {
    process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: msg.id, result }) + "\n");
  } catch {}
});
rl.on("close", () => {}); // stdin ended: stay
setInterval(() => held && held[0], 60_000);
