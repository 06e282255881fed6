// The table `cadre run` prints at its end: a row per task and per other session, then the totals.
import { cacheReadShare } from "../../orchestrator/index.ts";
import { NO_AGENT, recordSpendByAgent, resultLine, type Summary, type SummaryTask, usageFromRecord, worktreeLine } from "../../run/index.ts";
import { oneLine } from "../../util/one-line.ts";
import { type Colors, formatCacheShare, formatDuration, formatUsd, paint, postedName, table } from "./view/format.ts";

/** A task's result column: its error or answer, after the branch its worktree's work went to. */
function resultCell(task: SummaryTask): string {
  const answer = resultLine({ text: task.text, error: task.error ?? undefined, structuredOutput: task.structured_output ?? undefined }, 500);
  if (task.diff_stat === undefined) return answer;
  return oneLine(`${worktreeLine({ branch: task.branch ?? null, diffStat: task.diff_stat })}; ${answer}`, 500);
}

/** The table printed when the run ends: one row per task, one per other session (indented), then the totals, their sum. */
export function renderFinalTable(summary: Summary, options: { width: number; colors: Colors }): string {
  const c = options.colors;
  const header = ["task", "status", "turns", "cost", "cached", "queued", "time", "result"];
  const rows = summary.tasks.map((task) => [
    postedName(task.name, task.posted_by),
    task.status,
    String(task.num_turns),
    formatUsd(task.cost_usd, summary.cost_simulated),
    formatCacheShare(cacheReadShare(usageFromRecord(task.usage))),
    task.started_at === null && task.queued_ms === 0 ? "" : formatDuration(task.queued_ms),
    formatDuration(task.duration_ms),
    resultCell(task),
  ]);
  const sessionRows = summary.sessions.map((session) => [
    `  ${session.name}`,
    session.status ?? session.role,
    String(session.num_turns),
    formatUsd(session.cost_usd, summary.cost_simulated),
    formatCacheShare(cacheReadShare(usageFromRecord(session.usage))),
    "",
    "",
    `${session.role}${session.parent === null ? "" : ` for ${session.parent}`}`,
  ]);
  // A task not yet started when the record was written is drawn as waiting.
  const statuses = [
    ...summary.tasks.map((task) => (task.status === "pending" ? "waiting" : task.status)),
    ...summary.sessions.map((session) => session.status ?? "waiting"),
  ];
  const lines = table([header, ...rows, ...sessionRows], options.width, (r, column, cell) => {
    if (r === 0) return c.bold(cell);
    return column === 1 ? paint(statuses[r - 1]!, cell, c) : cell;
  });
  const t = summary.totals;
  const parts = [`${t.succeeded}/${t.tasks} succeeded`];
  if (t.failed > 0) parts.push(c.red(`${t.failed} failed`));
  if (t.cancelled > 0) parts.push(c.yellow(`${t.cancelled} cancelled`));
  if (t.skipped > 0) parts.push(c.yellow(`${t.skipped} skipped`));
  const share = cacheReadShare(usageFromRecord(t.usage));
  parts.push(
    `${t.num_turns} turns`,
    `${formatUsd(t.cost_usd, summary.cost_simulated)}${summary.cost_simulated ? " (simulated)" : ""}`,
    ...(share !== undefined && share > 0
      ? [`${formatCacheShare(share)} of input from cache (saved ${formatUsd(t.cache_saved_usd, summary.cost_simulated)})`]
      : []),
    formatDuration(summary.duration_ms),
  );
  if (summary.interrupted) parts.push(c.yellow("interrupted"));
  return [...lines, "", `${c.bold("total")}  ${parts.join(", ")}`, ...byAgentLine(summary, c)].join("\n");
}

/** What each agent spent, against its budget where it had one: none for a run of plain tasks only. */
function byAgentLine(summary: Summary, c: Colors): string[] {
  const spend = Object.entries(recordSpendByAgent(summary));
  if (spend.length === 0 || (spend.length === 1 && spend[0]![0] === NO_AGENT)) return [];
  const items = spend.map(([agent, { cost_usd, budget_usd }]) => {
    const cost = formatUsd(cost_usd, summary.cost_simulated);
    if (budget_usd === null) return `${agent} ${cost}`;
    const item = `${agent} ${cost} of ${formatUsd(budget_usd)}`;
    return cost_usd >= budget_usd ? c.red(`${item} (budget reached)`) : item;
  });
  return [`${c.bold("by agent")}  ${items.join(", ")}`];
}
