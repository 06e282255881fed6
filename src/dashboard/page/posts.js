// A poster's detail: the tasks it posted, each with its status and a link that selects its row, as they are posted.
import { h, placeInOrder, statusLabel } from "./format.js";
import { postedRows } from "./rows.js";

export class PostedList {
  /** @param {HTMLElement} section shown when the row posted tasks @param {HTMLElement} list @param {(key: string) => void} onSelect */
  constructor(section, list, onSelect) {
    this.section = section;
    this.list = list;
    this.onSelect = onSelect;
    /** Each posted task's <li>, by its row's key: kept while it is listed, so that a link with the focus keeps it. */
    this.items = new Map();
  }

  /** The tasks `row` posted, in the order of the run's rows; hidden when it posted none. */
  render(rows, row) {
    const posted = postedRows(rows, row);
    this.section.hidden = posted.length === 0;
    const items = new Map();
    for (const task of posted) {
      const item = this.items.get(task.key) ?? this.#create(task.key);
      fill(item, task);
      items.set(task.key, item);
    }
    this.items = items;
    placeInOrder(this.list, [...items.values()]);
  }

  #create(key) {
    return h(
      "li",
      { "data-key": key },
      h("button", { type: "button", class: "poster", onclick: () => this.onSelect(key) }),
      " ",
      h("span", { class: "posted-status muted" }),
    );
  }
}

function fill(item, task) {
  const button = item.querySelector("button");
  const status = item.querySelector(".posted-status");
  const label = statusLabel(task.status);
  if (button.textContent !== task.name) button.textContent = task.name;
  button.title = `${task.name}, ${task.status.replaceAll("_", " ")}: show its row`;
  button.setAttribute("aria-label", button.title);
  if (status.textContent !== label) status.textContent = label;
}
