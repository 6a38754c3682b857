// A client of the MCP TypeScript SDK v2 (@modelcontextprotocol/client):
// connects N times to the stdio server SERVER (node SERVER --mcp-sdk
// MARK), each with its own transport, and keeps every session open.
// MODE "auto" negotiates the protocol era first, which the SDK does on a
// disposable copy of the server (negotiateStdioViaSibling), reaped before
// the connect returns; "legacy" (the SDK's default) does not.
// Prints "connected I" after each and "ready" once all are; runs until
// killed. Run by cmd/reaper's TestRealMCPSDKProbeCopies.
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const [server, n, mark, mode] = process.argv.slice(2);
const clients = [];
for (let i = 0; i < Number(n); i++) {
  const c = new Client({ name: "reaper-probe-test", version: "1.0.0" }, { versionNegotiation: { mode } });
  await c.connect(new StdioClientTransport({ command: process.execPath, args: [server, "--mcp-sdk", mark] }));
  clients.push(c);
  console.log(`connected ${i}`);
}
console.log("ready");
setInterval(() => {}, 1 << 30);
