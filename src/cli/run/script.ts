// What `cadre run` does for a workflow script that it does not for a swarm file: find the script, read its args and scripted replies, and show its phases, logs and result.
import { readFile, stat } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import process from "node:process";
import { CadreError } from "../../errors.ts";
import type { RehearsalScripts } from "../../rehearsal/index.ts";
import {
  type ClaudeCodeRun,
  latestContinuationOf,
  latestRunOf,
  planWorkflowReplay,
  planWorkflowResume,
  type ResumePlan,
  type RunEvent,
  readClaudeCodeRun,
  recordedWorkflowSettings,
  type Summary,
  type WorkflowReplayPlan,
} from "../../run/index.ts";
import { printable } from "../../util/one-line.ts";
import { readRegularFile, UnfitFileError } from "../../util/regular-file.ts";
import { dataProblem } from "../../util/yaml.ts";
import { type CheckedScript, checkWorkflowScript, DEFAULT_SANDBOX_LIMITS, findSavedWorkflow, warmSandboxThread } from "../../workflow/index.ts";
import type { RunOptions } from "./options.ts";

/** A script ready to run: its text and file, what it is run with, and the run it resumes or replays. */
export interface PreparedScript {
  source: string;
  file: string;
  checked: CheckedScript;
  /** The args given (undefined: none given; a resumed or replayed run then keeps its own). */
  args: unknown;
  rehearsal: RehearsalScripts | undefined;
  replay: WorkflowReplayPlan | undefined;
  resume: ResumePlan | undefined;
  /** --resume wf_<id>: the Claude Code run it continues (and `resume`, a continuation of it that cadre recorded before). */
  claudeCode: ClaudeCodeRun | undefined;
}

/** A script that cannot run as asked, said in one line; exit 2. */
export class ScriptInputError extends CadreError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("USAGE", message, options);
  }
}

/** The script, its args, its scripted replies and the run it resumes or replays; throws a CadreError that says what is wrong. */
export async function prepareScript(options: RunOptions, runsDir: string): Promise<PreparedScript> {
  // The sandbox's thread starts while the script, its args and its record are read (about a fifth of a second, on a busy machine).
  warmSandboxThread();
  if (options.resumeClaudeCode !== undefined) return continuation(options, options.resumeClaudeCode, runsDir);
  const replay = options.replay ? await replayOf(options) : undefined;
  const { source, file } = replay ?? (await scriptOf(options));
  const checked = await checkWorkflowScript(source);
  const resume = options.resume === undefined ? undefined : await resumeOf(options.resume, file, runsDir);
  const given = await argsOf(options.script.args);
  return {
    source,
    file,
    checked,
    args: given ?? replay?.args,
    rehearsal: options.rehearse ? await rehearsalBeside(file) : undefined,
    replay,
    resume,
    claudeCode: undefined,
  };
}

/**
 * `--resume wf_<id>`: the Claude Code run, found in the CLI's session files of this project, and its script (the file
 * given, else the one the CLI saved, which its users edit, else the script as it ran); the continuation cadre recorded
 * before, if any, goes on in its own directory, so that what it ran is not asked again either.
 */
async function continuation(options: RunOptions, runId: string, runsDir: string): Promise<PreparedScript> {
  const claudeCode = await readClaudeCodeRun(runId, { cwd: process.cwd() });
  const saved = claudeCode.scriptPath === undefined ? undefined : await readFile(claudeCode.scriptPath, "utf8").catch(() => undefined);
  const { source, file } =
    options.config !== "" ? await scriptOf(options) : { source: saved ?? claudeCode.script, file: claudeCode.scriptPath ?? `${claudeCode.runId}.js` };
  const earlier = await latestContinuationOf(runId, runsDir);
  return {
    source,
    file,
    checked: await checkWorkflowScript(source),
    args: await argsOf(options.script.args),
    rehearsal: options.rehearse ? await rehearsalBeside(file) : undefined,
    replay: undefined,
    resume: earlier === undefined ? undefined : await planWorkflowResume(earlier),
    claudeCode,
  };
}

function replayOf({ replay, config }: RunOptions): Promise<WorkflowReplayPlan> {
  const { dir, override, inPlace } = replay!;
  return planWorkflowReplay(dir, {
    ...(config !== "" && { script: config }),
    ...(override !== undefined && { overrides: override }),
    inPlace,
  });
}

/** The script's text and file: a saved workflow by name, or the file given. */
async function scriptOf({ config, script }: RunOptions): Promise<{ source: string; file: string }> {
  if (script.workflow !== undefined) return findSavedWorkflow(script.workflow);
  const file = resolve(config);
  const info = await stat(file).catch(() => undefined);
  if (info === undefined || !info.isFile()) throw new ScriptInputError(`${info === undefined ? "no such file" : "not a file"}: ${file}`);
  return { source: await readFile(file, "utf8"), file };
}

async function resumeOf(given: string, file: string, runsDir: string): Promise<ResumePlan> {
  const dir = given === "" ? await latestRunOf(file, runsDir) : given;
  if (dir === undefined) throw new ScriptInputError(`no earlier run of ${file} under ${runsDir} to resume; run it without --resume`);
  return planWorkflowResume(dir);
}

/** --args: JSON text, or @file.json (a regular file, at most the sandbox's output limit: args count toward it); nested at most MAX_DEPTH deep. */
async function argsOf(value: string | undefined): Promise<unknown> {
  if (value === undefined) return undefined;
  const path = value.startsWith("@") ? resolve(value.slice(1)) : undefined;
  const text =
    path === undefined
      ? value
      : await readRegularFile(path, DEFAULT_SANDBOX_LIMITS.outputBytes).catch((cause: NodeJS.ErrnoException) => {
          throw new ScriptInputError(
            `--args ${value}: cannot read ${path} (${cause instanceof UnfitFileError ? cause.message : (cause.code ?? cause.message)})`,
            { cause },
          );
        });
  let args: unknown;
  try {
    args = JSON.parse(text);
  } catch (cause) {
    throw new ScriptInputError(`--args wants JSON (or @file.json): ${(cause as Error).message}`, { cause });
  }
  const problem = dataProblem(args);
  if (problem) throw new ScriptInputError(`--args: ${problem.message}, deeper than a script's args may be`);
  return args;
}

/** The scripted replies beside a script: NAME.rehearsal.yaml, .yml or .json. */
async function rehearsalBeside(file: string): Promise<RehearsalScripts> {
  const stem = join(dirname(file), basename(file).replace(/\.m?js$/i, ""));
  for (const candidate of [`${stem}.rehearsal.yaml`, `${stem}.rehearsal.yml`, `${stem}.rehearsal.json`]) {
    const text = await readFile(candidate, "utf8").catch(() => undefined);
    // Loaded only for --rehearse, as the swarm's rehearsal is.
    if (text !== undefined) return (await import("../../rehearsal/script.ts")).loadRehearsalScripts(text);
  }
  throw new ScriptInputError(`--rehearse: no scripted replies beside ${file} (write them, by agent label, in ${stem}.rehearsal.yaml)`);
}

/** What a run that continues a Claude Code run says of it: which run, what it keeps, how many calls will not be asked again. */
function continuationNotice(run: ClaudeCodeRun, options: RunOptions): string {
  const args = options.script.args === undefined ? `args ${JSON.stringify(run.args ?? null).slice(0, 200)}` : "the args given";
  const calls = run.calls.length;
  return `continues Claude Code's workflow run ${run.runId} (session ${run.sessionId}) with ${args}; ${calls} call${calls === 1 ? "" : "s"} that succeeded there give their results when the script makes them again`;
}

/** What a resumed script's run says it keeps of the run it resumes (and of the Claude Code run it continues). */
export function resumeNotice(script: PreparedScript, options: RunOptions): string | undefined {
  const recorded = script.resume && recordedWorkflowSettings(script.resume.previous);
  if (recorded === undefined) return script.claudeCode && continuationNotice(script.claudeCode, options);
  const kept = [
    ...(options.script.args === undefined ? [`args ${JSON.stringify(recorded.args ?? null).slice(0, 200)}`] : []),
    ...(options.script.budgetTokens === undefined && recorded.budgetTokens !== undefined ? [`--budget ${recorded.budgetTokens}`] : []),
    ...(options.script.budgetUsd === undefined && recorded.budgetUsd !== undefined ? [`--budget-usd ${recorded.budgetUsd}`] : []),
    ...(options.script.maxAgents === undefined && recorded.maxAgents !== undefined ? [`--max-agents ${recorded.maxAgents}`] : []),
  ];
  const calls = script.resume!.previous.tasks.filter((row) => row.status === "succeeded").length;
  const also = script.claudeCode ? `; it ${continuationNotice(script.claudeCode, options)}` : "";
  return `it keeps what it was started with (${kept.join(", ") || "nothing given then"}); ${calls} call${calls === 1 ? "" : "s"} that succeeded give their recorded results when the script makes them again${also}`;
}

/** A script's own event as a line of the run's view: its start, a phase as it starts, a log line, a call given its recorded result. */
export function scriptLine(event: RunEvent): string | undefined {
  switch (event.type) {
    case "workflow_started":
      return `workflow ${event.meta.name}: ${event.meta.description}`;
    case "workflow_phase":
      return `▸ ${event.workflow ? `${event.workflow} › ` : ""}${event.title}`;
    case "workflow_log":
      return `  · ${event.message}`;
    case "agent_ended":
      return event.replayed ? `  ↺ ${event.call.label} (its recorded result)` : undefined;
    default:
      return undefined;
  }
}

/** The agents by phase, in the order their phases first came, then the script's result or error. */
export function scriptFinalLines(summary: Summary): string[] {
  const record = summary as Summary & { result?: unknown; error?: { message: string } | null; agent_count?: number };
  const phases = new Map<string, string[]>();
  for (const row of summary.tasks) {
    const phase = typeof row.phase === "string" ? row.phase : "(no phase)";
    const mark = row.carried_over ? "↺" : row.status === "succeeded" ? "✓" : "✗";
    phases.set(phase, [...(phases.get(phase) ?? []), `${mark} ${String(row.label ?? row.name)}`]);
  }
  // Phases, labels and errors come from the script and the model: each shown as one line, never obeyed, by the terminal.
  return [
    ...[...phases].map(([phase, agents]) => `${phase}: ${agents.join("  ")}`),
    record.error ? `error: ${record.error.message}` : `result: ${JSON.stringify(record.result ?? null)?.slice(0, 2_000)}`,
  ].map(printable);
}
