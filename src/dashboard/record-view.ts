// The page's rows and totals of a run's record (read leniently by the run layer's readRecord), and its transcripts.
import { createReadStream } from "node:fs";
import { isAbsolute, relative, resolve } from "node:path";
import { z } from "zod";
import { cacheReadShare } from "../orchestrator/index.ts";
import { NdjsonDecoder, parseCliMessage } from "../protocol/index.ts";
import {
  backgroundTaskFromRecord,
  type LenientSummary,
  NO_AGENT,
  type RowKind,
  readRecord,
  recordSpendByAgent,
  resultLine,
  SUMMARY_FILE,
  taskKey,
  usageFromRecord,
} from "../run/index.ts";
import { Conversation } from "./conversation.ts";
import { backgroundView, blankRowView, type PhaseView, type RowView, type TotalsView } from "./feed.ts";

/** summary.json of a run directory, read leniently with its journal, or why the page cannot show it. */
export async function readRecordForPage(runDir: string): Promise<{ record: LenientSummary } | { problem: string }> {
  const read = await readRecord(runDir, { lenient: true });
  if ("record" in read) return read;
  switch (read.problem) {
    case "missing":
      return { problem: `no ${SUMMARY_FILE} (still running, or killed before it was written)` };
    case "not_json":
      return { problem: `${SUMMARY_FILE} is not JSON: ${read.cause.message}` };
    case "not_a_record":
      return { problem: `${SUMMARY_FILE} is not a cadre run summary: ${z.prettifyError(read.cause)}` };
  }
}

function time(iso: string | null | undefined): number | null {
  const at = iso ? Date.parse(iso) : NaN;
  return Number.isFinite(at) ? at : null;
}

/** A task's row as its record tells it: times only when the record has them. */
function taskRowView(task: LenientSummary["tasks"][number]): RowView {
  const startedAt = time(task.started_at);
  const finishedAt = time(task.finished_at);
  const queuedMs = task.queued_ms ?? null;
  const queuedAt = startedAt !== null && queuedMs !== null ? startedAt - queuedMs : null;
  const phases: PhaseView[] = [];
  if (queuedAt !== null) phases.push({ status: "queued", at: queuedAt });
  if (startedAt !== null) phases.push({ status: "running", at: startedAt });
  if (finishedAt !== null) phases.push({ status: task.status, at: finishedAt });
  return {
    key: taskKey(task.name),
    name: task.name,
    agent: task.agent ?? null,
    kind: "task",
    parent: null,
    group: task.template ?? null,
    postedBy: task.posted_by ?? null,
    status: task.status,
    attempts: task.attempts ?? 0,
    turns: task.num_turns ?? 0,
    costUsd: task.cost_usd ?? 0,
    queuedAt,
    startedAt,
    finishedAt,
    queuedMs,
    runMs: startedAt !== null && finishedAt !== null ? finishedAt - startedAt : (task.duration_ms ?? null),
    phases,
    branch: task.branch ?? null,
    // One line, as the live run shows it: the page's table has room for no more, the transcript has the rest.
    activity: resultLine({ text: task.text ?? "", error: task.error ?? undefined, structuredOutput: task.structured_output ?? undefined }),
    error: task.error?.message ?? null,
    waitsFor: task.depends_on ?? [],
    hasConversation: typeof task.transcript === "string",
    pending: [],
    background: (task.background_tasks ?? []).map((entry) => backgroundView(backgroundTaskFromRecord(entry))),
    // A workflow run's row: the phase of its agent() call.
    phase: typeof task.phase === "string" ? task.phase : null,
  };
}

const SESSION_KINDS = new Set<RowKind>(["peer", "supervisor", "child", "session"]);

function sessionRowView(session: NonNullable<LenientSummary["sessions"]>[number], index: number, taskNames: Set<string>): RowView {
  const role = session.role ?? "session";
  const kind: RowKind = SESSION_KINDS.has(role as RowKind) ? (role as RowKind) : "session";
  const parent = session.parent && taskNames.has(session.parent) ? taskKey(session.parent) : null;
  return {
    ...blankRowView(`s:${index}`, session.name ?? `${role}${session.agent ? ` ${session.agent}` : ""}`, session.agent, kind),
    parent,
    status: session.status ?? "closed",
    turns: session.num_turns ?? 0,
    costUsd: session.cost_usd ?? 0,
    hasConversation: typeof session.transcript === "string",
  };
}

/** The totals a record states: counts from its tasks; the cost and turns from its totals, where they include the sessions. */
export function recordTotals(
  record: LenientSummary,
): Pick<TotalsView, "tasks" | "byStatus" | "turns" | "costUsd" | "cacheReadShare" | "byAgent" | "budgets"> {
  const byStatus: Record<string, number> = {};
  for (const task of record.tasks) byStatus[task.status] = (byStatus[task.status] ?? 0) + 1;
  const sum = (rows: { cost_usd?: number }[]) => rows.reduce((total, row) => total + (row.cost_usd ?? 0), 0);
  return {
    tasks: record.tasks.length,
    byStatus,
    turns: record.totals?.num_turns ?? record.tasks.reduce((total, task) => total + (task.num_turns ?? 0), 0),
    costUsd: record.totals?.cost_usd ?? sum(record.tasks) + sum(record.sessions ?? []),
    cacheReadShare: record.totals?.usage ? (cacheReadShare(usageFromRecord(record.totals.usage)) ?? null) : null,
    ...recordSpend(record),
  };
}

/** Spend by agent a record states (or, for an older one, adds up to), and each agent budget's use. */
function recordSpend(record: LenientSummary): Pick<TotalsView, "byAgent" | "budgets"> {
  const spend = Object.entries(recordSpendByAgent(record))
    .map(([agent, { cost_usd, budget_usd }]) => ({ agent: agent === NO_AGENT ? "" : agent, costUsd: cost_usd, budgetUsd: budget_usd ?? null }))
    .sort((a, b) => b.costUsd - a.costUsd);
  const budgets = spend.flatMap(({ agent, costUsd, budgetUsd }) =>
    budgetUsd === null ? [] : [{ budget: `agent ${agent}`, limitUsd: budgetUsd, spentUsd: costUsd, reached: costUsd >= budgetUsd }],
  );
  return { byAgent: spend, budgets };
}

/** The rows of a record: its tasks in order, each followed by the sessions it spawned or asked; the other sessions last. */
export function recordRowViews(record: LenientSummary): RowView[] {
  const tasks = record.tasks.map(taskRowView);
  const names = new Set(record.tasks.map((t) => t.name));
  const sessions = (record.sessions ?? []).map((s, i) => sessionRowView(s, i, names));
  // Linear in tasks and sessions: a run of 10,000 tasks with as many sessions is read at once.
  const byParent = new Map<string | null, RowView[]>();
  for (const session of sessions) {
    const siblings = byParent.get(session.parent) ?? [];
    byParent.set(session.parent, siblings);
    siblings.push(session);
  }
  const rows: RowView[] = [];
  for (const task of tasks) rows.push(task, ...(byParent.get(task.key) ?? []));
  return [...rows, ...(byParent.get(null) ?? [])];
}

/** The transcript file a row of the record names, resolved inside the run directory (never outside it). */
export function recordTranscript(record: LenientSummary, runDir: string, key: string): string | undefined {
  const named = key.startsWith("t:")
    ? record.tasks.find((t) => taskKey(t.name) === key)?.transcript
    : record.sessions?.[Number(key.slice(2))]?.transcript;
  if (typeof named !== "string") return undefined;
  const path = resolve(runDir, named);
  const inside = relative(resolve(runDir), path);
  return inside.startsWith("..") || isAbsolute(inside) ? undefined : path;
}

/** A transcript file read back as a conversation (ended). */
export async function readTranscript(path: string): Promise<Conversation | undefined> {
  const conversation = new Conversation();
  const decoder = new NdjsonDecoder();
  const add = (events: ReturnType<NdjsonDecoder["push"]>) => {
    for (const event of events) {
      if (event.kind !== "value") continue;
      const message = parseCliMessage(event.value);
      const stamp = (event.value as { timestamp?: unknown }).timestamp;
      conversation.addMessage(message, typeof stamp === "string" ? time(stamp) : null);
    }
  };
  try {
    for await (const chunk of createReadStream(path)) add(decoder.push(chunk as Buffer));
  } catch {
    return undefined;
  }
  add(decoder.end());
  conversation.end();
  return conversation;
}
