// A minimal MCP server over stdio (JSON-RPC 2.0, newline-delimited): it
// answers initialize and tools/list, and otherwise idles, as a real
// server between calls does.
import { createInterface } from "node:readline";
const rl = createInterface({ input: process.stdin });
const send = (m) => process.stdout.write(JSON.stringify(m) + "\n");
rl.on("line", (line) => {
  let m;
  try { m = JSON.parse(line); } catch { return; }
  if (m.id === undefined) return; // a notification
  switch (m.method) {
    case "initialize":
      send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params?.protocolVersion ?? "2025-06-18", capabilities: { tools: {} }, serverInfo: { name: "reaper-e2e", version: "1.0.0" } } });
      break;
    case "tools/list":
      send({ jsonrpc: "2.0", id: m.id, result: { tools: [{ name: "ping", description: "answers pong", inputSchema: { type: "object", properties: {} } }] } });
      break;
    case "tools/call":
      send({ jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text", text: "pong" }] } });
      break;
    default:
      send({ jsonrpc: "2.0", id: m.id, result: {} });
  }
});
setInterval(() => {}, 1 << 30);
