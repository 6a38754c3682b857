// A stand-in gateway for TestStartupHook: it runs the shipped startup hook,
// and only then "goes on" — first checking, in the kernel's view, which of
// the previous generation's processes (pids in argv) still live.
import { readFileSync } from "node:fs";
import { reapPreviousGeneration } from "../../packaging/hook/startup-hook.mjs";

const [reaper, ledger, policy, ...pids] = process.argv.slice(2);
const report = reapPreviousGeneration({ reaper, ledgers: [ledger], policy });
const alive = pids.filter((pid) => {
  try {
    // A zombie is dead: it waits only for its parent to collect it.
    return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
});
console.log(JSON.stringify({ continuing: true, alive, findings: report.findings.length }));
