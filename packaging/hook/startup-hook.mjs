// The gateway startup hook for a Node gateway: before it spawns anything,
// run `reaper reap` on the previous generation's ledgers, so its leftovers
// are gone first.
//
//   import { reapPreviousGeneration } from "./startup-hook.mjs";
//   reapPreviousGeneration({ ledgers: [stateDir] });
//   // ... now spawn PTYs, ACP runtimes, MCP servers
//
// Exit statuses: 0 done; 1, 3 and 77 are logged and the gateway goes on
// (leftovers are reported, the timer retries); 2 and 78 are fatal: the
// hook's command line, the policy or a ledger is wrong and must be fixed.
import { execFileSync } from "node:child_process";

export const FATAL_EXIT_CODES = new Set([2, 78]);

export function reapPreviousGeneration({ reaper = "reaper", ledgers = [], policy, timeoutMs = 120_000, log = console } = {}) {
  const args = ["reap", "--quiet", "--output", "json"];
  for (const l of ledgers) args.push("--ledger", l);
  if (policy) args.push("--policy", policy);
  let stdout;
  try {
    // Synchronous on purpose: nothing may be spawned until it returns.
    stdout = execFileSync(reaper, args, { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], timeout: timeoutMs });
  } catch (err) {
    if (err.status == null || FATAL_EXIT_CODES.has(err.status)) throw err;
    log.warn(`reaper exited ${err.status}; the gateway starts anyway`);
    stdout = err.stdout;
  }
  const report = stdout ? JSON.parse(stdout) : { findings: [] };
  const killed = report.findings.filter((f) => f.outcome === "killed" || f.outcome === "gone");
  log.info(`reaper: ${killed.length} of ${report.findings.length} leftover trees removed`);
  return report;
}
