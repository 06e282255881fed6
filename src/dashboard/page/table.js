// The table of tasks and sessions: one row each, updated in place as snapshots arrive.
import { h, money, serverNow, span, statusLabel } from "./format.js";

const KIND_NOTES = { child: "spawned", peer: "peer", supervisor: "supervisor", session: "" };

export class TaskTable {
  /** @param {HTMLTableSectionElement} body @param {(key: string) => void} onSelect */
  constructor(body, onSelect) {
    this.body = body;
    this.onSelect = onSelect;
    this.rows = new Map();
    this.selected = null;
  }

  render(snapshot) {
    const showBranch = snapshot.rows.some((row) => row.branch);
    this.body.closest("table").classList.toggle("with-branch", showBranch);
    const seen = new Set();
    let previous = null;
    for (const row of snapshot.rows) {
      seen.add(row.key);
      const tr = this.rows.get(row.key) ?? this.#create(row);
      this.#fill(tr, row, snapshot);
      // Keep the snapshot's order: spawned workers come right after their parent.
      const wanted = previous ? previous.nextSibling : this.body.firstChild;
      if (wanted !== tr) this.body.insertBefore(tr, wanted);
      previous = tr;
    }
    for (const [key, tr] of this.rows) {
      if (seen.has(key)) continue;
      tr.remove();
      this.rows.delete(key);
    }
  }

  select(key) {
    this.selected = key;
    for (const [rowKey, tr] of this.rows) {
      const selected = rowKey === key;
      tr.classList.toggle("selected", selected);
      tr.querySelector("button").setAttribute("aria-pressed", String(selected));
    }
  }

  #create(row) {
    const button = h("button", { type: "button", class: "row-name", "aria-pressed": "false", onclick: () => this.onSelect(row.key) });
    const cells = ["status", "agent", "turns num", "cost num", "queued num", "run num", "attempts num", "branch"].map((name) =>
      h("td", { class: name }),
    );
    cells.push(h("td", { class: "activity" }, h("span")));
    const tr = h("tr", { "data-key": row.key }, h("th", { scope: "row" }, button), ...cells);
    tr.addEventListener("click", (event) => {
      if (event.target instanceof HTMLElement && event.target.closest("button")) return;
      this.onSelect(row.key);
    });
    this.rows.set(row.key, tr);
    if (row.key === this.selected) tr.classList.add("selected");
    return tr;
  }

  #fill(tr, row, snapshot) {
    const running = snapshot.live && row.startedAt !== null && row.finishedAt === null;
    const runMs = running ? serverNow(snapshot) - row.startedAt : row.runMs;
    const note = KIND_NOTES[row.kind];
    const button = tr.querySelector("button");
    set(button, `${row.parent ? "↳ " : ""}${row.name}${note ? ` (${note})` : ""}`);
    button.disabled = !row.hasConversation;
    button.title = row.hasConversation ? `show the conversation of ${row.name}` : "nothing said yet";
    tr.dataset.status = row.status;
    tr.classList.toggle("child", row.parent !== null);
    const cells = tr.querySelectorAll("td");
    set(cells[0], statusLabel(row.status));
    set(cells[1], row.agent ?? "");
    set(cells[2], row.turns > 0 ? String(row.turns) : "");
    set(cells[3], row.costUsd > 0 ? money(row.costUsd, snapshot.costSimulated) : "");
    set(cells[4], span(row.queuedMs));
    set(cells[5], span(runMs));
    set(cells[6], row.attempts > 0 ? String(row.attempts) : "");
    set(cells[7], row.branch ?? "");
    const waiting = row.status === "waiting" && row.waitsFor.length > 0 ? `after ${row.waitsFor.join(", ")}` : "";
    const pending = row.pending.length > 0 ? `waiting for you: ${row.pending[0].ask}` : "";
    set(cells[8].firstElementChild, pending || row.error || row.activity || waiting);
  }
}

function set(element, text) {
  if (element.textContent !== text) element.textContent = text;
}
