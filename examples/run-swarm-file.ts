// The runSwarmFile example of docs/library.md, as the page shows it (test/doc-blocks.test.ts holds them equal),
// type-checked with the sources. It runs in a project that installed cadre, whose examples come in the package.
import { runSwarmFile } from "cadre";

const { exitCode, summary, path } = await runSwarmFile("node_modules/cadre/examples/code-review.yaml", {
  outDir: ".cadre/runs/library",
  rehearse: true, // the config's scripts on the built-in scripted model, offline; false: real Claude
  signal: AbortSignal.timeout(30 * 60_000), // stops the run; the record is still written
  onEvent: (event) => event.type === "task_settled" && console.log(event.task.name, event.result.status),
});
console.log(`${summary.totals.succeeded}/${summary.totals.tasks} succeeded (exit code ${exitCode}); record in ${path}`);
