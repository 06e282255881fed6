// The end of `cadre run`: the last record, the final table, the warnings, a replay's divergences, and the dashboard left open for a person watching.
import process from "node:process";
import type { RunStop, SwarmRun } from "../../run/index.ts";
import type { RunTelemetry } from "../../telemetry/index.ts";
import { printable } from "../../util/one-line.ts";
import { stopOnSignals, stopped } from "../signals.ts";
import type { RunDashboard } from "./dashboard.ts";
import { renderFinalTable } from "./final-table.ts";
import type { RunOptions } from "./options.ts";
import { scriptFinalLines } from "./script.ts";
import { colorsFor } from "./view/format.ts";

/** The command that goes on with a stopped run. */
function resumeCommand(options: RunOptions, outDir: string): string {
  const what = options.script.workflow !== undefined ? `--workflow ${options.script.workflow}` : options.config;
  return `cadre run ${what ? `${what} ` : ""}--resume ${outDir}`;
}

/** Writes the last record and tells how the run ended; resolves with the exit code once the dashboard (if any) has closed. */
export async function finishRun(
  run: SwarmRun,
  stop: RunStop | undefined,
  options: RunOptions,
  extras: { outDir: string; telemetry: RunTelemetry | undefined; dashboard: RunDashboard | undefined; stoppedByUser: boolean },
): Promise<number> {
  const { summary, path, error } = run.writeRecord(stop);
  await extras.telemetry?.finish(summary);
  const tableOut = options.json ? process.stderr : process.stdout;
  const table = renderFinalTable(summary, { width: tableOut.columns ?? 120, colors: colorsFor(tableOut) });
  const script = options.kind === "script" ? `${scriptFinalLines(summary).join("\n")}\n` : "";
  const record = error ? `record: not written (${error.message}); the transcripts that could be written are in ${extras.outDir}` : `record: ${path}`;
  tableOut.write(`\n${table}\n\n${script}${record}\n`);
  if (stop !== undefined && !summary.complete) process.stderr.write(`cadre run: to go on with it: ${resumeCommand(options, extras.outDir)}\n`);
  for (const warning of run.warnings()) process.stderr.write(`cadre run: ${printable(warning)}\n`);
  const divergences = run.divergences();
  for (const divergence of divergences) process.stderr.write(`cadre run: ${printable(divergence.message)}\n`);
  const { dashboard } = extras;
  if (dashboard) {
    dashboard.live.finish(Date.now(), { record: summary, dir: extras.outDir });
    // A person is watching: the page stays to be read, unless they stopped the run themselves.
    if (!extras.stoppedByUser) {
      process.stderr.write(`cadre run: the dashboard stays open at ${dashboard.serving.url} until Ctrl-C\n`);
      const leaving = stopOnSignals("the dashboard");
      await stopped(leaving.signal);
      leaving.dispose();
    }
    await dashboard.serving.close();
  }
  // The tasks may all have succeeded, but a record that is not there needs fixing.
  // A replay that left its record failed, even where its tasks succeeded.
  return (error || divergences.length > 0) && summary.exit_code === 0 ? 1 : summary.exit_code;
}
