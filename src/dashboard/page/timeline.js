// The timeline: one track per row, a bar per phase (queued, running, …), so that a person sees
// when each task waited, ran and ended, and how many ran at once.
import { h, serverNow, span, statusLabel } from "./format.js";
import { groupStatuses } from "./rows.js";

const TICKS = 6;
/** Lanes drawn at most: a run of thousands of tasks shows those the table lists first (its filters pick them). */
const MAX_LANES = 200;

/**
 * @param {any[]} listed what the table lists, in its order (rows, and groups: a for_each's copies, a loop's
 * rounds): each gets a lane, up to MAX_LANES. A group's lane holds the bars of all its rows, folded as the
 * table folds it; an open group is followed by a lane per row.
 */
export function renderTimeline(container, snapshot, listed = snapshot.rows.map((row) => ({ row }))) {
  const timed = snapshot.rows.filter((row) => row.phases.length > 0);
  if (timed.length === 0 || timed.every((row) => row.phases.every((phase) => phase.status === "waiting"))) {
    container.replaceChildren(h("p", { class: "muted" }, snapshot.notice ?? "Nothing has been queued yet."));
    return;
  }
  // The client's clock may differ from the server's: measure "now" on the server's.
  const now = snapshot.live ? serverNow(snapshot) : (snapshot.finishedAt ?? lastPhase(timed));
  const start = timed.reduce((min, row) => Math.min(min, row.phases[0].at), snapshot.startedAt ?? Number.POSITIVE_INFINITY);
  const end = Math.max(now, start + 1000);
  const x = (at) => `${(((at - start) / (end - start)) * 100).toFixed(3)}%`;
  const width = (from, to) => `${Math.max(0.4, ((to - from) / (end - start)) * 100).toFixed(3)}%`;

  const ticks = Array.from({ length: TICKS + 1 }, (_, i) => {
    const tick = h("span", { class: "tick" }, span(((end - start) * i) / TICKS));
    tick.style.left = `${(i / TICKS) * 100}%`;
    return tick;
  });
  const axis = h("div", { class: "axis", "aria-hidden": "true" }, h("span", { class: "label" }), h("div", { class: "track" }, ...ticks));
  const barsOf = (row) =>
    row.phases.map((phase, i) => {
      const until = row.phases[i + 1]?.at ?? (isEnd(phase.status) ? phase.at : now);
      const text = `${row.name}: ${statusLabel(phase.status)} for ${span(until - phase.at)}`;
      const bar = h("span", { class: `bar status-${phase.status}${isEnd(phase.status) ? " end" : ""}`, title: text });
      bar.style.left = x(phase.at);
      bar.style.width = isEnd(phase.status) ? "" : width(phase.at, until);
      return bar;
    });
  const summaryOf = (row) =>
    row.phases.length === 0
      ? row.status
      : row.phases
          .map((phase, i) => (isEnd(phase.status) ? phase.status : `${phase.status} ${span((row.phases[i + 1]?.at ?? now) - phase.at)}`))
          .join(", ");
  const lane = (className, name, label, bars, shown = name) =>
    h(
      "div",
      { class: className, "data-name": name },
      h("span", { class: "label", title: shown }, shown),
      h("div", { class: "track", role: "img", "aria-label": label }, ...bars),
    );
  // Every row has a lane, so that one still waiting shows as an empty track beside the others.
  const tracks = listed
    .slice(0, MAX_LANES)
    .map((entry) =>
      entry.row
        ? lane(
            `lane${entry.row.parent ? " child" : ""}${entry.inGroup ? " in-group" : ""}`,
            entry.row.name,
            `${entry.row.name}: ${summaryOf(entry.row)}`,
            barsOf(entry.row),
          )
        : lane(
            `lane group${entry.open ? " open" : ""}`,
            entry.group,
            `${entry.group}: ${entry.rows.length} ${entry.rows.length === 1 ? "copy" : "copies"}, ${groupStatuses(entry.rows)}`,
            entry.rows.flatMap(barsOf),
            `${entry.open ? "▾" : "▸"} ${entry.group} ×${entry.rows.length}`,
          ),
    );
  const more = listed.length - MAX_LANES;
  const rest = more > 0 ? h("p", { class: "muted" }, `… and ${more.toLocaleString("en-US")} more: filter the table to see their lanes.`) : null;
  container.replaceChildren(axis, ...tracks, ...(rest ? [rest] : []), concurrencyLine(timed, start, now));
}

function isEnd(status) {
  return ["succeeded", "failed", "cancelled", "skipped", "closed"].includes(status);
}

function lastPhase(rows) {
  return rows.reduce((max, row) => Math.max(max, row.phases.at(-1).at), Number.NEGATIVE_INFINITY);
}

/** The most rows that were running at once, from the phases. */
function concurrencyLine(rows, start, now) {
  const changes = [];
  for (const row of rows) {
    row.phases.forEach((phase, i) => {
      if (phase.status !== "running") return;
      changes.push([phase.at, 1], [row.phases[i + 1]?.at ?? now, -1]);
    });
  }
  changes.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let running = 0;
  let peak = 0;
  for (const [, delta] of changes) {
    running += delta;
    peak = Math.max(peak, running);
  }
  return h("p", { class: "muted peak" }, `At most ${peak} running at once over ${span(now - start)}.`);
}
