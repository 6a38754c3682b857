// An ACP wrapper shaped like OpenClaw's generated <state>/acpx/*-acp-wrapper.mjs
// (extensions/acpx): it starts its adapter detached, in a session of its own,
// and stays to forward its stdio. This old-generation shape has no watchdog
// on its parent: when the gateway dies, wrapper and adapter live on.
import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
spawn(process.execPath, [join(here, "claude-agent-acp.mjs"), "--acp"], { detached: true, stdio: "ignore", env: process.env });
setInterval(() => {}, 1 << 30);
