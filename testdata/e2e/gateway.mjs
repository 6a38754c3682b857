// A small agent gateway for reaper's end-to-end tests. It spawns what
// OpenClaw spawns, as OpenClaw spawns it, and records it as it goes:
//   - a PTY shell through node-pty running a long command (one that ignores
//     hangup, as long-running commands under an exec tool often do);
//   - a real MCP server (@modelcontextprotocol/server-filesystem) through
//     `npm exec`, detached, speaking stdio: it is initialized for real;
//   - an ACP-shaped wrapper, `node acpx/codex-acp-wrapper.mjs
//     --openclaw-acpx-lease-id …`, that starts its adapter detached;
// and writes a v1 ledger (reaper's format) and OpenClaw-style state: a
// gateway lock, gateway-instance-id, acpx/process-leases.json.
//
//   node gateway.mjs --state DIR --ledger FILE [--hook REAPER --policy FILE]
// SIGUSR1: mark the PTY and MCP runs done without killing them (the zombie
// session bug). SIGUSR2: reset the parent session without closing the ACP
// child session (the child-session leak). It prints one JSON line when
// everything runs: {"ready": true, "pids": {...}}.
import { spawn } from "node:child_process";
import { randomUUID, createHash } from "node:crypto";
import { mkdirSync, openSync, fsyncSync, closeSync, writeFileSync, renameSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import pty from "@lydell/node-pty";

const here = dirname(fileURLToPath(import.meta.url));
const arg = (name) => { const i = process.argv.indexOf(name); return i > 0 ? process.argv[i + 1] : undefined; };
const stateDir = arg("--state");
const ledgerPath = arg("--ledger");
const log = (...a) => process.stderr.write(`[gateway ${process.pid}] ${a.join(" ")}\n`);

// The start identity reaper verifies: <boot_id>:<field 22 of /proc/PID/stat>.
const bootId = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
function startTicks(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
}
const identity = (pid) => `${bootId}:${startTicks(pid)}`;

// Atomic replace: temp file in the same directory, fsync, rename.
function writeAtomic(path, data) {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = join(dirname(path), `.${randomUUID()}.tmp`);
  writeFileSync(tmp, data, { mode: 0o600 });
  const fd = openSync(tmp, "r");
  fsyncSync(fd);
  closeSync(fd);
  renameSync(tmp, path);
}

// The startup hook: before anything is spawned, reap the previous
// generation's leftovers.
if (arg("--hook")) {
  const { reapPreviousGeneration } = await import("../../packaging/hook/startup-hook.mjs");
  const report = reapPreviousGeneration({ reaper: arg("--hook"), ledgers: [ledgerPath, stateDir], policy: arg("--policy"),
    log: { info: log, warn: log } });
  log(`hook done: ${report.findings.length} trees`);
}

const instance = randomUUID();
const ledger = {
  version: 1,
  owner: { name: "e2e-gateway", pid: process.pid, start: identity(process.pid), instance },
  sessions: [
    { key: "agent:main:main", state: "active" },
    { key: "agent:codex:acp:1", parent: "agent:main:main", state: "active" },
    { key: "agent:main:tools", state: "active" },
  ],
  runs: [],
};
const saveLedger = () => writeAtomic(ledgerPath, JSON.stringify(ledger, null, 2) + "\n");
saveLedger();
writeAtomic(join(stateDir, "gateway-instance-id"), instance + "\n");
writeAtomic(join(stateDir, `gateway.${createHash("sha256").update(stateDir).digest("hex").slice(0, 8)}.lock`),
  JSON.stringify({ pid: process.pid, createdAt: new Date().toISOString(), configPath: join(stateDir, "openclaw.json"),
    startTime: Number(startTicks(process.pid)) }));

const markers = { OPENCLAW_GATEWAY_SERVICE_PID: String(process.pid), OPENCLAW_STATE_DIR: stateDir };
function record(id, kind, pid, session, command) {
  ledger.runs.push({ id, kind, pid, pgid: pid, start: identity(pid), session, command, state: "running",
    started_at: new Date().toISOString() });
  saveLedger();
}

// 1. A PTY shell of the exec tool.
const shell = pty.spawn("/bin/bash", ["-c", "trap '' HUP; while :; do date; sleep 1; done"],
  { name: "xterm-256color", cols: 120, rows: 30, cwd: stateDir, env: { ...process.env, ...markers, OPENCLAW_SHELL: "exec" } });
shell.onData(() => {});
record("pty-1", "pty", shell.pid, "agent:main:tools", "bash -c 'while :; do date; sleep 1; done'");

// 2. A real MCP server over stdio, detached, through npm exec.
const mcp = spawn("npm", ["exec", "--no", "--", "mcp-server-filesystem", stateDir],
  { cwd: here, detached: true, stdio: ["pipe", "pipe", "ignore"], env: { ...process.env, ...markers } });
record("mcp-1", "mcp", mcp.pid, "agent:main:tools", "npm exec mcp-server-filesystem");
const initialized = new Promise((resolve, reject) => {
  let buf = "";
  mcp.stdout.on("data", (d) => {
    buf += d;
    if (buf.includes('"id":1')) resolve(JSON.parse(buf.split("\n").find((l) => l.includes('"id":1'))));
  });
  mcp.on("exit", (c) => reject(new Error(`mcp server exited ${c}`)));
});
mcp.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: {
  protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "e2e-gateway", version: "1" } } }) + "\n");

// 3. An ACP wrapper with OpenClaw's lease flags and markers.
const leaseId = randomUUID();
const acp = spawn(process.execPath, [join(here, "acpx", "codex-acp-wrapper.mjs"), "--openclaw-acpx-lease-id", leaseId,
  "--openclaw-gateway-instance-id", instance], { cwd: here, stdio: ["pipe", "ignore", "ignore"],
  env: { ...process.env, ...markers, OPENCLAW_SHELL: "acp", OPENCLAW_ACPX_LEASE_ID: leaseId, OPENCLAW_GATEWAY_INSTANCE_ID: instance } });
record("acp-1", "acp", acp.pid, "agent:codex:acp:1", "codex-acp-wrapper.mjs");
writeAtomic(join(stateDir, "acpx", "process-leases.json"), JSON.stringify({ version: 1, leases: [{
  leaseId, gatewayInstanceId: instance, sessionKey: "agent:codex:acp:1", wrapperRoot: join(stateDir, "acpx"),
  wrapperPath: join(here, "acpx", "codex-acp-wrapper.mjs"), rootPid: acp.pid, commandHash: "e2e",
  startedAt: Date.now(), state: "open" }] }, null, 2));

process.on("SIGUSR1", () => {
  for (const r of ledger.runs) if (r.id === "pty-1" || r.id === "mcp-1") { r.state = "done"; r.ended_at = new Date().toISOString(); }
  saveLedger();
  log("runs pty-1 and mcp-1 marked done; their processes left running");
  console.log(JSON.stringify({ marked: "done" }));
});
process.on("SIGUSR2", () => {
  ledger.sessions.find((s) => s.key === "agent:main:main").state = "reset";
  saveLedger();
  log("session agent:main:main reset; its child session's runtime left running");
  console.log(JSON.stringify({ marked: "reset" }));
});

const init = await initialized;
console.log(JSON.stringify({ ready: true, mcp: init.result.serverInfo.name,
  pids: { gateway: process.pid, pty: shell.pid, mcp: mcp.pid, acp: acp.pid } }));
setInterval(() => {}, 1 << 30);
