/**
 * `npm run bench:load -- --workers N[,N…]` (default 50): N live claude workers at
 * once under one cadre, on the scripted model, for each N in turn. Prints the wall
 * time, cadre's RSS and V8 heap while all N were live (and per agent), its peak
 * RSS and CPU, the workers' RSS and CPU, and how many model requests were in
 * flight at the peak. `--peer-tools` gives every worker the built-in peer MCP
 * server (by default only workers with an agent to reach get it; these have none).
 * A size whose workers free memory cannot hold (256 MB each, 1 GB kept back) is
 * skipped, saying so.
 *
 * cadre runs in its own node process (bench/load-run.ts), so its memory and
 * CPU are its own; the rehearsal server runs here. That process runs cadre
 * compiled as `cadre run` runs on Node (bundled by rolldown, as dist/cli is),
 * not through tsx, whose compiler would be most of its memory. Goal (reported,
 * not asserted): 100 live workers with cadre's own peak RSS at most 150 MB.
 */
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { freemem, loadavg } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs, promisify } from "node:util";
import { build } from "rolldown";
import { startRehearsalServer } from "../src/rehearsal/server.ts";
import type { LoadReport } from "./load-run.ts";

const REPO = resolve(import.meta.dirname, "..");
const SCRIPT = "load";
/** The answer after the denied Write waits this long, so that the workers' requests overlap. */
const REPLY_DELAY_MS = 2_000;

const { values } = parseArgs({ options: { workers: { type: "string", default: "50" }, "peer-tools": { type: "boolean", default: false } } });
const sizes = values.workers.split(",").map(Number);
if (!sizes.every((n) => Number.isInteger(n) && n >= 1)) throw new Error(`--workers wants whole numbers of at least 1, got "${values.workers}"`);

const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const load = () => loadavg()[0]!.toFixed(1);

/** bench/load-run.ts bundled into a directory inside the repository, from where its imports find node_modules. */
async function bundleRunner(): Promise<{ file: string; remove: () => Promise<void> }> {
  await mkdir(join(REPO, ".cadre"), { recursive: true });
  const dir = await mkdtemp(join(REPO, ".cadre", "bench-load-"));
  const file = join(dir, "load-run.js");
  await build({
    input: join(REPO, "bench", "load-run.ts"),
    platform: "node",
    // As in rolldown.config.ts: the claude binary's package is resolved at run time.
    external: [/^@anthropic-ai\/claude-code/],
    tsconfig: join(REPO, "tsconfig.json"),
    logLevel: "silent",
    output: { file, format: "esm" },
  });
  return { file, remove: () => rm(dir, { recursive: true, force: true }) };
}

const runner = await bundleRunner();
const server = await startRehearsalServer({
  scripts: {
    [SCRIPT]: [
      { tool_use: { name: "Write", input: { file_path: "load.txt", content: "x" } } },
      { text: "done {{prompt}}", delay_ms: REPLY_DELAY_MS },
    ],
  },
});
/** Free memory a size needs: its workers, and some left to the machine. */
const neededGb = (workers: number) => (workers * 256) / 1024 + 1;

async function measure(workers: number): Promise<void> {
  const loadBefore = load();
  const freeBefore = freemem() / 2 ** 30;
  if (freeBefore < neededGb(workers)) {
    console.log(`${workers} live workers: skipped, ${freeBefore.toFixed(1)} GB free and they need about ${neededGb(workers).toFixed(0)} GB\n`);
    return;
  }
  const args = [runner.file, String(workers), server.baseUrlFor(SCRIPT), ...(values["peer-tools"] ? ["peer-tools"] : [])];
  const { stdout } = await promisify(execFile)(process.execPath, args, { maxBuffer: 16 * 1024 * 1024 });
  const r = JSON.parse(stdout.trim().split("\n").at(-1)!) as LoadReport;
  const peers = values["peer-tools"] ? ", each with the peer MCP server" : "";
  console.log(
    `${workers} live workers${peers} under one cadre, on the scripted model (load ${loadBefore} → ${load()}, ${freeBefore.toFixed(1)} GB free before)`,
  );
  console.log(`  wall              ${s(r.wallMs)}, first start to last result`);
  console.log(
    `  live at once      ${r.liveAtOnce} of ${workers} workers, holding ${(r.workersRssMb / 1024).toFixed(1)} GB between them (${(r.workersRssMb / r.liveAtOnce).toFixed(0)} MB each)`,
  );
  console.log(
    `  cadre, all live   RSS ${r.liveRssMb.toFixed(0)} MB (${(r.liveRssMb / workers).toFixed(2)} MB per agent), V8 heap in use ${r.liveHeapMb.toFixed(0)} MB`,
  );
  console.log(`  cadre             peak RSS ${r.maxRssMb.toFixed(0)} MB, CPU ${s(r.ownCpuMs)}`);
  console.log(`  workers           CPU ${s(r.workersCpuMs)} in all, ${(r.workersCpuMs / workers / 1000).toFixed(2)} s each`);
  console.log(`  in flight         ${server.peakInFlight} model requests at the peak\n`);
  if (r.failures.length > 0) {
    console.log(`  failures          ${r.failures.length}:\n    ${r.failures.slice(0, 10).join("\n    ")}`);
    process.exitCode = 1;
  }
}

try {
  for (const workers of sizes) await measure(workers);
} finally {
  await server.close();
  await runner.remove();
}
