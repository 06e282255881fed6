// Which rows the table lists, in what order: the filters (status, agent, a part of the name), and
// a for_each task's copies folded under one group row that opens to show them; a row's background work under it.
import { backgroundEntries } from "./background.js";

/** @typedef {{ status: string, agent: string, query: string }} Filter */

export const NO_FILTER = { status: "", agent: "", query: "" };

export function filtering(filter) {
  return filter.status !== "" || filter.agent !== "" || filter.query.trim() !== "";
}

/** The filter's parts: each lets a row through or not (`query` is the search, trimmed and lower-cased), and has a name to say it was cleared. */
const PARTS = [
  { part: "status", name: "status filter", passes: (row, filter) => filter.status === "" || row.status === filter.status },
  { part: "agent", name: "agent filter", passes: (row, filter) => filter.agent === "" || (row.agent ?? "") === filter.agent },
  { part: "query", name: "search", passes: (row, _filter, query) => query === "" || row.name.toLowerCase().includes(query) },
];

function matches(row, filter, query) {
  return PARTS.every(({ passes }) => passes(row, filter, query));
}

/**
 * The filter that lets `row` through as well: `filter` with the parts that hide it cleared, and the names of those
 * parts ("status filter", "search"), none when it is listed already. A link to a row reaches it through this.
 * @param {Filter} filter @returns {{ filter: Filter, cleared: string[] }}
 */
export function filterShowing(filter, row) {
  const query = filter.query.trim().toLowerCase();
  const hiding = PARTS.filter(({ passes }) => !passes(row, filter, query));
  const shown = { ...filter };
  for (const { part } of hiding) shown[part] = NO_FILTER[part];
  return { filter: shown, cleared: hiding.map(({ name }) => name) };
}

/**
 * The entries to list: `{ row }` for a row, `{ group, rows }` for a for_each task's copies (and
 * the workers they spawned), placed where its first copy is. A group shows its rows when it is
 * open, or while a filter is on (then only the rows that match). Linear in the rows.
 * @param {any[]} rows @param {Filter} filter @param {Set<string>} open
 */
export function listEntries(rows, filter, open) {
  const query = filter.query.trim().toLowerCase();
  const on = filtering(filter);
  /** The group each row belongs to: its own, or its parent's (a spawned worker follows its task). */
  const groupOf = new Map();
  const groups = new Map();
  const entries = [];
  for (const row of rows) {
    const group = row.group ?? (row.parent === null ? null : (groupOf.get(row.parent) ?? null));
    groupOf.set(row.key, group);
    const shown = !on || matches(row, filter, query);
    if (group === null) {
      if (shown) entries.push({ row });
      continue;
    }
    let entry = groups.get(group);
    if (!entry) {
      entry = { group, rows: [], shown: [] };
      groups.set(group, entry);
      entries.push(entry);
    }
    entry.rows.push(row);
    if (shown) entry.shown.push(row);
  }
  const listed = [];
  for (const entry of entries) {
    if (entry.row) {
      listed.push(entry, ...backgroundEntries(entry.row));
      continue;
    }
    if (on && entry.shown.length === 0) continue;
    listed.push({ group: entry.group, rows: entry.rows, shown: entry.shown.length, open: on || open.has(entry.group) });
    if (on || open.has(entry.group)) for (const row of entry.shown) listed.push({ row, inGroup: true }, ...backgroundEntries(row));
  }
  return listed;
}

/** Whether `row` may have posted tasks: a task of the run, not a worker it spawned nor a session. */
const mayPost = (row) => row.kind === "task" && row.parent === null;

/** The key of the row of the task that posted `row` (a task of the run, named as `postedBy` says); undefined when none. */
export function posterKey(rows, row) {
  if (!row?.postedBy) return undefined;
  return rows.find((other) => other.name === row.postedBy && mayPost(other))?.key;
}

/** The rows of the tasks `poster` posted, in the run's order: none for a row that is not a task's. */
export function postedRows(rows, poster) {
  if (!poster || !mayPost(poster)) return [];
  return rows.filter((row) => row.postedBy === poster.name);
}

/** The statuses and agents the rows have, sorted: the filters' choices. */
export function choices(rows) {
  const statuses = new Set();
  const agents = new Set();
  for (const row of rows) {
    statuses.add(row.status);
    if (row.agent) agents.add(row.agent);
  }
  return { statuses: [...statuses].sort(), agents: [...agents].sort() };
}

/** A group's rows counted by status: "8,100 succeeded · 900 failed". */
export function groupStatuses(rows) {
  const counts = new Map();
  for (const row of rows) counts.set(row.status, (counts.get(row.status) ?? 0) + 1);
  return [...counts]
    .sort((a, b) => b[1] - a[1])
    .map(([status, count]) => `${count.toLocaleString("en-US")} ${status.replaceAll("_", " ")}`)
    .join(" · ");
}
