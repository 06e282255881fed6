// The table of tasks and sessions. Only the rows on screen are in the page (a run of ten thousand
// tasks keeps a few dozen <tr>); spacers above and below keep the scroll bar true to the whole list.
import { createBackgroundRow, fillBackgroundRow } from "./background.js";
import { h, money, placeInOrder, serverNow, span, statusLabel } from "./format.js";
import { filtering, groupStatuses, listEntries, NO_FILTER, posterKey } from "./rows.js";
import { stoppableBeforeStart } from "./steer.js";

const KIND_NOTES = { child: "spawned", peer: "peer", supervisor: "supervisor", session: "" };
/** Rows drawn beyond the visible ones on each side, so that a short scroll shows no gap. */
const OVERSCAN = 8;
const COLUMNS = 12;

export class TaskTable {
  /** @param {HTMLElement} wrap the scrolling box @param {HTMLTableSectionElement} body @param {(key: string) => void} onSelect */
  constructor(wrap, body, onSelect) {
    this.wrap = wrap;
    this.body = body;
    this.onSelect = onSelect;
    /** Called when a group opens or folds: the timeline follows the table. */
    this.onToggle = null;
    this.snapshot = null;
    this.entries = [];
    this.filter = NO_FILTER;
    this.open = new Set();
    this.selected = null;
    /** The <tr> of each row or group drawn now, by key: reused while it stays on screen. */
    this.drawn = new Map();
    this.rowHeight = 0;
    this.pending = false;
    this.above = spacer();
    this.below = spacer();
    wrap.addEventListener("scroll", () => this.#schedule(), { passive: true });
    new ResizeObserver(() => this.#schedule()).observe(wrap);
  }

  /** The rows listed now (filters and open groups applied), in order. */
  listedRows() {
    return this.entries.filter((entry) => entry.row).map((entry) => entry.row);
  }

  /**
   * The rows and groups the table lists now, in order (a group folded, or open and followed by its rows): the
   * timeline's lanes. A task's background tasks, listed under it, have no timing of their own and no lane.
   */
  listedEntries() {
    return this.entries.filter((entry) => !entry.background);
  }

  render(snapshot) {
    this.snapshot = snapshot;
    const table = this.body.closest("table");
    table.classList.toggle(
      "with-branch",
      snapshot.rows.some((row) => row.branch),
    );
    // A workflow script's run: each agent() call's phase.
    table.classList.toggle("with-phase", snapshot.workflow !== null);
    // A run where agents posted tasks: who posted each.
    table.classList.toggle(
      "with-posted",
      snapshot.rows.some((row) => row.postedBy),
    );
    this.#list();
  }

  setFilter(filter) {
    this.filter = filter;
    this.#list();
  }

  select(key) {
    this.selected = key;
    for (const [rowKey, tr] of this.drawn) {
      if (!tr.dataset.key) continue;
      const selected = rowKey === key;
      tr.classList.toggle("selected", selected);
      tr.querySelector("button.row-name").setAttribute("aria-pressed", String(selected));
    }
  }

  /**
   * Brings the row of `key` into view and gives its name the focus: opens the folded group it is in, and scrolls the
   * table to it when it is off screen (and the page to the table). A row the filters hide is not reached: the page
   * clears the filters that hide it first (unfilterFor in app.js).
   */
  reveal(key) {
    let at = this.#indexOf(key);
    const group = this.snapshot?.rows.find((row) => row.key === key)?.group ?? null;
    if (at === -1 && group !== null && !this.open.has(group) && !filtering(this.filter)) {
      this.open.add(group);
      this.#list();
      this.onToggle?.();
      at = this.#indexOf(key);
    }
    if (at === -1) return;
    const height = this.rowHeight || 32;
    const head = this.body.closest("table").tHead?.offsetHeight ?? 0;
    // The row's place in the scrolled box, measured as #draw places rows; the sticky head covers the top.
    const top = head + at * height;
    const { scrollTop, clientHeight } = this.wrap;
    if (top < scrollTop + head || top + height > scrollTop + clientHeight) {
      this.wrap.scrollTop = Math.max(0, top - head - (clientHeight - head - height) / 2);
      this.#draw();
    }
    const tr = this.drawn.get(key);
    tr?.scrollIntoView({ block: "nearest" });
    tr?.querySelector("button.row-name")?.focus({ preventScroll: true });
  }

  #indexOf(key) {
    return this.entries.findIndex((entry) => entry.row?.key === key);
  }

  #list() {
    if (!this.snapshot) return;
    this.entries = listEntries(this.snapshot.rows, this.filter, this.open);
    this.#draw();
  }

  #schedule() {
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => {
      this.pending = false;
      this.#draw();
    });
  }

  #draw() {
    const entries = this.entries;
    const height = this.rowHeight || 32;
    const head = this.body.closest("table").tHead?.offsetHeight ?? 0;
    const top = Math.max(0, this.wrap.scrollTop - head);
    const first = Math.max(0, Math.floor(top / height) - OVERSCAN);
    const last = Math.min(entries.length, Math.ceil((top + this.wrap.clientHeight) / height) + OVERSCAN);
    const drawn = new Map();
    const trs = [];
    for (let i = first; i < last; i++) {
      const entry = entries[i];
      const key = entry.row ? entry.row.key : entry.background ? entry.background.key : `group:${entry.group}`;
      const tr =
        this.drawn.get(key) ??
        (entry.row ? this.#create(entry.row) : entry.background ? createBackgroundRow(COLUMNS) : this.#createGroup(entry.group));
      if (entry.row) this.#fill(tr, entry.row, Boolean(entry.inGroup));
      else if (entry.background) fillBackgroundRow(tr, entry.background);
      else this.#fillGroup(tr, entry);
      drawn.set(key, tr);
      trs.push(tr);
    }
    this.drawn = drawn;
    size(this.above, first * height);
    size(this.below, (entries.length - last) * height);
    placeInOrder(this.body, [this.above, ...trs, this.below]);
    this.select(this.selected);
    // Rows are one line each: the first drawn gives the height the list is measured in.
    if (!this.rowHeight && trs.length > 0) {
      this.rowHeight = trs[0].getBoundingClientRect().height || 32;
      if (this.rowHeight !== height) this.#draw();
    }
  }

  #create(row) {
    const button = h("button", { type: "button", class: "row-name", "aria-pressed": "false", onclick: () => this.onSelect(row.key) });
    const cells = ["phase", "status", "agent", "posted", "turns num", "cost num", "queued num", "run num", "attempts num", "branch"].map((name) =>
      h("td", { class: name }),
    );
    cells.push(h("td", { class: "activity" }, h("span")));
    const tr = h("tr", { "data-key": row.key }, h("th", { scope: "row" }, button), ...cells);
    tr.addEventListener("click", (event) => {
      if (event.target instanceof HTMLElement && event.target.closest("button")) return;
      this.onSelect(row.key);
    });
    return tr;
  }

  #createGroup(group) {
    const toggle = () => {
      if (this.open.has(group)) this.open.delete(group);
      else this.open.add(group);
      this.#list();
      this.onToggle?.();
    };
    const button = h("button", { type: "button", class: "row-name group-toggle", "aria-expanded": "false", onclick: toggle });
    const tr = h(
      "tr",
      { class: "group", "data-group": group },
      h("th", { scope: "row" }, button),
      h("td", { class: "group-summary", colspan: COLUMNS - 1 }),
    );
    return tr;
  }

  #fillGroup(tr, entry) {
    const button = tr.querySelector("button");
    const count = entry.rows.length.toLocaleString("en-US");
    const shown = entry.shown === entry.rows.length ? "" : `, ${entry.shown.toLocaleString("en-US")} shown`;
    set(button, `${entry.open ? "▾" : "▸"} ${entry.group} (${count} copies${shown})`);
    button.setAttribute("aria-expanded", String(entry.open));
    const turns = entry.rows.reduce((sum, row) => sum + row.turns, 0);
    const cost = entry.rows.reduce((sum, row) => sum + row.costUsd, 0);
    const figures = [
      groupStatuses(entry.rows),
      turns > 0 ? `${turns.toLocaleString("en-US")} turns` : "",
      cost > 0 ? money(cost, this.snapshot.costSimulated) : "",
    ];
    set(tr.lastElementChild, figures.filter(Boolean).join(" · "));
  }

  #fill(tr, row, inGroup) {
    const snapshot = this.snapshot;
    const running = snapshot.live && row.startedAt !== null && row.finishedAt === null;
    const runMs = running ? serverNow(snapshot) - row.startedAt : row.runMs;
    const note = KIND_NOTES[row.kind];
    const button = tr.querySelector("button.row-name");
    set(button, `${row.parent ? "↳ " : ""}${row.name}${note ? ` (${note})` : ""}`);
    const stoppable = !row.hasConversation && stoppableBeforeStart(snapshot, row);
    button.disabled = !row.hasConversation && !stoppable;
    button.title = row.hasConversation
      ? `show the conversation of ${row.name}`
      : stoppable
        ? "waits for a slot: select it to stop it"
        : "nothing said yet";
    tr.dataset.status = row.status;
    tr.classList.toggle("child", row.parent !== null || inGroup);
    const cells = tr.querySelectorAll("td");
    set(cells[0], row.phase ?? "");
    set(cells[1], statusLabel(row.status));
    set(cells[2], row.agent ?? "");
    this.#fillPosted(cells[3], row);
    set(cells[4], row.turns > 0 ? String(row.turns) : "");
    set(cells[5], row.costUsd > 0 ? money(row.costUsd, snapshot.costSimulated) : "");
    set(cells[6], span(row.queuedMs));
    set(cells[7], span(runMs));
    set(cells[8], row.attempts > 0 ? String(row.attempts) : "");
    set(cells[9], row.branch ?? "");
    const waiting = row.status === "waiting" && row.waitsFor.length > 0 ? `after ${row.waitsFor.join(", ")}` : "";
    const pending = row.pending.length > 0 ? `waiting for you: ${row.pending[0].ask}` : "";
    const activity = pending || row.error || row.activity || waiting;
    set(cells[10].firstElementChild, activity);
    cells[10].title = activity;
  }

  /** Who posted the task: a link to the poster's row; none for a task of the file (its row has no button but its name's). */
  #fillPosted(cell, row) {
    if (!row.postedBy) return cell.replaceChildren();
    const link =
      cell.firstElementChild ??
      cell.appendChild(h("button", { type: "button", class: "poster", onclick: () => this.#selectPoster(cell.closest("tr").dataset.key) }));
    fillPoster(link, row);
  }

  /** Selects the row of the task that posted the row of `key`. */
  #selectPoster(key) {
    const rows = this.snapshot?.rows ?? [];
    const posted = rows.find((row) => row.key === key);
    const poster = posterKey(rows, posted);
    if (poster !== undefined) this.onSelect(poster);
  }
}

/** A posted task's link to its poster: the name of the task that posted it. */
export function fillPoster(button, row) {
  set(button, row.postedBy);
  button.title = `posted by ${row.postedBy}: show its row`;
  button.setAttribute("aria-label", button.title);
}

/** A row as tall as the rows it stands for (hidden when there are none). */
function spacer() {
  return h("tr", { class: "spacer", "aria-hidden": "true", hidden: true }, h("td", { colspan: COLUMNS }));
}

function size(spacerRow, height) {
  spacerRow.hidden = height <= 0;
  spacerRow.firstElementChild.style.height = `${Math.max(0, height)}px`;
}

function set(element, text) {
  if (element.textContent !== text) element.textContent = text;
}
