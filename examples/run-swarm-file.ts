// The runSwarmFile example of docs/library.md, type-checked with the sources ("cadre" is src/index.ts here).
// Offline: npx tsx examples/run-swarm-file.ts examples/code-review.yaml --rehearse
import process from "node:process";
import { runSwarmFile } from "cadre";

const file = process.argv[2] ?? "examples/code-review.yaml";
const { exitCode, summary, path } = await runSwarmFile(file, {
  outDir: ".cadre/runs/library",
  rehearse: process.argv.includes("--rehearse"),
  signal: AbortSignal.timeout(30 * 60_000),
  onEvent: (event) => event.type === "task_settled" && console.log(event.task.name, event.result.status),
});
console.log(`${summary.totals.succeeded}/${summary.totals.tasks} succeeded; record in ${path}`);
process.exitCode = exitCode;
