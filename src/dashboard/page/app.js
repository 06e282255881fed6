// The dashboard page: picks a run, follows its state and the selected row's conversation.
import { Api, takeToken } from "./api.js";
import { ConversationView } from "./conversation.js";
import { money, span, statusLabel } from "./format.js";
import { PendingList } from "./permissions.js";
import { PostedList } from "./posts.js";
import { choices, filtering, filterShowing, posterKey } from "./rows.js";
import { SteerBox } from "./steer.js";
import { fillPoster, TaskTable } from "./table.js";
import { renderTimeline } from "./timeline.js";

/**
 * The elements index.html has, by id, where the page needs more than an HTMLElement.
 * @typedef {{ "run-picker": HTMLSelectElement, "status-filter": HTMLSelectElement, "agent-filter": HTMLSelectElement, "task-search": HTMLInputElement, conversation: HTMLOListElement, steer: HTMLFormElement, "steer-text": HTMLTextAreaElement, "steer-interrupt": HTMLButtonElement, "steer-stop": HTMLButtonElement }} Elements
 */
/** @type {<K extends string>(id: K) => K extends keyof Elements ? Elements[K] : HTMLElement} */
const $ = (id) => /** @type {any} */ (document.getElementById(id));
const api = new Api(takeToken());
const params = new URLSearchParams(location.search);

const page = {
  runId: null,
  snapshot: null,
  /** Where each row is in the snapshot, by key: a patch replaces rows in place. */
  index: new Map(),
  stateSource: null,
  selected: params.get("row"),
  /** The row whose conversation is open, and whether it was open while the row had none yet. */
  shown: null,
};

const table = new TaskTable($("tasks-wrap"), document.querySelector("#tasks tbody"), (key) => select(key));
table.onToggle = () => page.snapshot && renderTimeline($("timeline"), page.snapshot, table.listedEntries());
const conversation = new ConversationView($("conversation"), $("conversation-state"));
const steerBox = new SteerBox(
  { form: $("steer"), text: $("steer-text"), interrupt: $("steer-interrupt"), stop: $("steer-stop"), state: $("steer-state") },
  (row, request) => api.steer(page.runId, row, request),
);
const postedList = new PostedList($("row-posts"), $("row-posts-list"), (key) => select(key));
const pending = new PendingList($("pending-section"), $("pending"), (row, requestId, answer) => api.answer(page.runId, row, requestId, answer));

function notice(text) {
  $("notice").hidden = !text;
  $("notice").textContent = text ?? "";
}

/** The address says which run and row are shown, so that it can be shared (without the token) or reloaded. */
function remember() {
  const query = new URLSearchParams();
  if (page.runId) query.set("run", page.runId);
  if (page.selected) query.set("row", page.selected);
  history.replaceState(null, "", `${location.pathname}?${query}`);
}

/**
 * What the server holds, had before the page's `load`: a script inserted while
 * the page loads holds back its load event until it has run (an EventSource or
 * a fetch would not), so a page or a screenshot that waits for `load` shows
 * the run. The script (see sendFirstPaint in routes.ts) calls the callback
 * registered here with the runs, the run shown and its state; null when it
 * cannot be had (a wrong token), and the page then asks as it otherwise would.
 */
function firstPaint() {
  return new Promise((resolve) => {
    /** @type {any} */ (globalThis).cadreFirstPaint = resolve;
    const script = document.createElement("script");
    const run = params.get("run");
    script.src = api.streamUrl("/api/first-paint.js", run ? { run } : {});
    // After a script that called back, resolving again does nothing.
    script.addEventListener("load", () => resolve(null));
    script.addEventListener("error", () => resolve(null));
    document.head.append(script);
  });
}

async function start() {
  if (!api.token) return notice("This dashboard needs its token: open the address cadre printed (it ends in #token=…).");
  const held = await firstPaint();
  let runs = held?.runs;
  if (!runs) {
    try {
      ({ runs } = await api.runs());
    } catch (error) {
      return notice(`Cannot list the runs: ${error.message}`);
    }
  }
  if (runs.length === 0) return notice("No runs here yet.");
  const picker = $("run-picker");
  picker.replaceChildren(
    ...runs.map((run) => new Option(`${run.title} — ${run.startedAt ? new Date(run.startedAt).toLocaleString() : run.id} — ${run.outcome}`, run.id)),
  );
  $("run-picker-label").hidden = runs.length < 2;
  picker.addEventListener("change", () => {
    page.selected = null;
    follow(picker.value);
  });
  const wanted = runs.find((run) => run.id === (held?.runId ?? params.get("run"))) ?? runs[0];
  picker.value = wanted.id;
  follow(wanted.id, held?.runId === wanted.id ? held.state : null);
}

/** Follows a run's state stream; `held`, its state had already, is shown before the stream's first snapshot replaces it. */
function follow(runId, held = null) {
  page.stateSource?.close();
  page.runId = runId;
  page.shown = null;
  conversation.clear("Select a task to see its conversation.");
  remember();
  if (held) showState(held);
  const source = new EventSource(api.streamUrl(`/api/runs/${encodeURIComponent(runId)}/state`));
  page.stateSource = source;
  source.addEventListener("state", (event) => showState(JSON.parse(event.data)));
  // The run's figures with only the rows that changed: the others stay as they were.
  source.addEventListener("patch", (event) => {
    if (!page.snapshot) return;
    const patch = fromWire(JSON.parse(event.data));
    const rows = page.snapshot.rows;
    for (const row of patch.rows) {
      const at = page.index.get(row.key);
      if (at !== undefined) rows[at] = row;
    }
    render({ ...patch, rows, receivedAt: Date.now() });
  });
  source.addEventListener("error", () => {
    if (page.snapshot?.live) notice("Lost the connection to cadre; trying again…");
    else if (!page.snapshot) notice("Cannot reach this run (is the token right?).");
  });
}

/** A whole snapshot, as the server sends it: it replaces what the page shows. */
function showState(wire) {
  notice(null);
  const snapshot = fromWire(wire);
  snapshot.receivedAt = Date.now();
  page.index = new Map(snapshot.rows.map((row, i) => [row.key, i]));
  render(snapshot);
}

/** Rows come as lists of values in the order of `columns` (see toWire in feed.ts): back to objects. */
function fromWire(wire) {
  const { columns } = wire;
  const rows = wire.rows.map((values) => {
    const row = {};
    for (let i = 0; i < columns.length; i++) row[columns[i]] = values[i];
    return row;
  });
  return { ...wire, rows };
}

function select(key) {
  page.selected = key;
  remember();
  unfilterFor(key);
  table.select(key);
  table.reveal(key);
  openConversation();
}

/** Opens the selected row's conversation once it has one (a queued task has said nothing yet). */
function openConversation() {
  const row = selectedRow();
  steerBox.render(page.snapshot, row);
  renderOrigin(row);
  $("conversation-name").textContent = row ? `of ${row.name}` : "(select a task)";
  if (!row) return;
  if (!row.hasConversation) {
    page.shown = null;
    return conversation.clear(`${row.name} has said nothing yet; its conversation appears here when it starts.`);
  }
  if (page.shown === row.key) return;
  page.shown = row.key;
  conversation.open(api.streamUrl(`/api/runs/${encodeURIComponent(page.runId)}/conversation`, { row: row.key }), page.snapshot.costSimulated);
}

function selectedRow() {
  return page.snapshot?.rows.find((r) => r.key === page.selected);
}

/** Where the selected row came from, the task that posted it, and the tasks it posted: links to their rows. */
function renderOrigin(row) {
  $("row-origin").hidden = !row?.postedBy;
  if (row?.postedBy) fillPoster($("row-poster"), row);
  postedList.render(page.snapshot?.rows ?? [], row);
}

$("row-poster").addEventListener("click", () => {
  const poster = posterKey(page.snapshot?.rows ?? [], selectedRow());
  if (poster !== undefined) select(poster);
});

function render(snapshot) {
  page.snapshot = snapshot;
  document.title = `${snapshot.title} — cadre`;
  $("run-title").textContent = snapshot.title;
  $("tasks-heading").textContent = snapshot.mode === "sessions" ? "Sessions" : "Tasks";
  const state = $("run-state");
  state.textContent = snapshot.live ? "live" : snapshot.mode === "record" ? "recorded run" : "finished";
  state.dataset.state = snapshot.live ? "live" : "finished";
  if (snapshot.notice) notice(snapshot.notice);
  renderTotals(snapshot);
  renderWorkflow(snapshot.workflow);
  pending.render(snapshot);
  renderFilters(snapshot);
  table.render(snapshot);
  table.select(page.selected);
  renderCount();
  renderTimeline($("timeline"), snapshot, table.listedEntries());
  if (page.selected && page.shown !== page.selected) openConversation();
  else {
    steerBox.render(snapshot, selectedRow());
    renderOrigin(selectedRow());
  }
  // When the page first showed the run, on its own clock: the time to open a large run is measured by it.
  if (performance.getEntriesByName("cadre:drawn").length === 0) performance.mark("cadre:drawn");
}

/** A workflow script's run: its return value (or why it has none yet) and its log() lines. */
function renderWorkflow(workflow) {
  $("workflow-section").hidden = workflow === null;
  if (workflow === null) return;
  $("workflow-error").hidden = workflow.error === null;
  $("workflow-error").textContent = workflow.error ?? "";
  const result = workflow.result ?? (workflow.error === null ? "(the script has not returned yet)" : "");
  if ($("workflow-result").textContent !== result) $("workflow-result").textContent = result;
  $("workflow-result").hidden = result === "";
  const logs = $("workflow-logs");
  if (logs.childElementCount !== workflow.logs.length)
    logs.replaceChildren(...workflow.logs.map((line) => Object.assign(document.createElement("li"), { textContent: line })));
}

/** Each agent's spend, against its budget where it has one; then the task budgets. */
function byAgentText(totals, simulated) {
  const agents = (totals.byAgent ?? []).map(({ agent, costUsd, budgetUsd }) => {
    const budget = (totals.budgets ?? []).find((b) => b.budget === `agent ${agent}`);
    const limit = budgetUsd === null ? "" : ` of ${money(budgetUsd)}${budget?.reached ? " — budget reached" : ""}`;
    return `${agent || "(no agent)"} ${money(costUsd, simulated)}${limit}`;
  });
  const tasks = (totals.budgets ?? [])
    .filter((b) => b.budget.startsWith("task "))
    .map((b) => `${b.budget} ${money(b.spentUsd, simulated)} of ${money(b.limitUsd)}${b.reached ? " — budget reached" : ""}`);
  return [...agents, ...tasks].join(" · ") || "—";
}

function renderTotals(snapshot) {
  const { totals } = snapshot;
  const done = ["succeeded", "failed", "cancelled", "skipped", "closed"].reduce((sum, status) => sum + (totals.byStatus[status] ?? 0), 0);
  const statuses = Object.entries(totals.byStatus)
    .map(([status, count]) => `${statusLabel(status)} ${count}`)
    .join(" · ");
  const budget = totals.budgetUsd !== null ? ` of ${money(totals.budgetUsd)}${totals.budgetExceeded ? " — budget reached" : ""}` : "";
  const limit = snapshot.rateLimit;
  const concurrency = limit
    ? `${snapshot.running} running; limit ${limit.effectiveLimit}${limit.effectiveLimit < limit.limit ? ` (lowered from ${limit.limit})` : ""}`
    : `${snapshot.running} running`;
  const rateLimited = limit
    ? limit.rateLimited
      ? `rate limited${limit.backoffUntil ? `, no new start for ${span(limit.backoffUntil - snapshot.now)}` : ""}`
      : "ok"
    : "—";
  const end = snapshot.finishedAt ?? (snapshot.live ? snapshot.now : null);
  const items = [
    ["Tasks", `${done}/${totals.tasks} done`, "total-tasks", totals.tasks],
    ["By status", statuses || "—", "total-statuses", null],
    ["Turns", String(totals.turns), "total-turns", totals.turns],
    [
      "Cost",
      `${money(totals.costUsd, snapshot.costSimulated)}${budget}${snapshot.costSimulated ? " (simulated)" : ""}`,
      "total-cost",
      totals.costUsd,
    ],
    ["By agent", byAgentText(totals, snapshot.costSimulated), "total-by-agent", null],
    [
      "From cache",
      totals.cacheReadShare === null ? "—" : `${Math.round(totals.cacheReadShare * 100)}% of input`,
      "total-cache",
      totals.cacheReadShare,
    ],
    ["Concurrency", concurrency, "total-concurrency", snapshot.running],
    ["Rate limit", rateLimited, "total-rate-limit", null],
    ["Elapsed", snapshot.startedAt !== null && end !== null ? span(end - snapshot.startedAt) : "—", "total-elapsed", null],
  ];
  $("totals").replaceChildren(
    ...items.map(([term, value, id, raw]) => {
      const group = document.createElement("div");
      const dt = document.createElement("dt");
      const dd = document.createElement("dd");
      dt.textContent = term;
      dd.textContent = value;
      dd.id = id;
      if (raw !== null) dd.dataset.value = String(raw);
      group.append(dt, dd);
      return group;
    }),
  );
}

// Running times grow between snapshots: redraw them once a second while the run is live (no request is made).
setInterval(() => {
  if (!page.snapshot?.live) return;
  table.render(page.snapshot);
  renderTimeline($("timeline"), page.snapshot, table.listedEntries());
}, 1000);

/** The filters' choices: the statuses and agents the rows have (a choice made stays while rows still have it). */
function renderFilters(snapshot) {
  const { statuses, agents } = choices(snapshot.rows);
  /** @type {["status-filter" | "agent-filter", string[]][]} */
  const filters = [
    ["status-filter", statuses],
    ["agent-filter", agents],
  ];
  for (const [id, values] of filters) {
    const select = $(id);
    const have = [...select.options].slice(1).map((option) => option.value);
    if (have.join("\n") === values.join("\n")) continue;
    const chosen = select.value;
    select.replaceChildren(new Option("all", ""), ...values.map((value) => new Option(value.replaceAll("_", " "), value)));
    select.value = values.includes(chosen) ? chosen : "";
  }
}

/** A link to a row the filters hide clears the parts that hide it (the others stay), and says so beside them. */
function unfilterFor(key) {
  const row = page.snapshot?.rows.find((r) => r.key === key);
  if (!row) return;
  const { filter, cleared } = filterShowing(table.filter, row);
  if (cleared.length === 0) return;
  $("status-filter").value = filter.status;
  $("agent-filter").value = filter.agent;
  $("task-search").value = filter.query;
  refilter();
  $("filter-note").textContent = `${cleared.join(" and ")} cleared to show ${row.name}`;
}

function filterOf() {
  return { status: $("status-filter").value, agent: $("agent-filter").value, query: $("task-search").value };
}

function renderCount() {
  const total = page.snapshot?.rows.length ?? 0;
  const listed = table.listedRows().length;
  const count = $("table-count");
  count.textContent = filtering(table.filter) ? `${listed.toLocaleString("en-US")} of ${total.toLocaleString("en-US")} shown` : "";
  count.dataset.listed = String(listed);
}

/** The table lists the rows the filters let through; a note that a link cleared some goes once they change again. */
function refilter() {
  $("filter-note").textContent = "";
  table.setFilter(filterOf());
  renderCount();
  if (page.snapshot) renderTimeline($("timeline"), page.snapshot, table.listedEntries());
}

$("task-search").addEventListener("input", refilter);
$("status-filter").addEventListener("change", refilter);
$("agent-filter").addEventListener("change", refilter);

start();
