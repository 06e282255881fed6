// A row's background work (workflows and their agents, background agents and shells), listed under the row as one-line children.
import { h, statusLabel } from "./format.js";

const KINDS = { local_workflow: "workflow", local_agent: "background agent", local_bash: "background shell" };

function tokens(count) {
  return count === null || count === undefined ? "" : `${count.toLocaleString("en-US")} tokens`;
}

/** The list entries for a row's background tasks and a workflow's agents, in order. */
export function backgroundEntries(row) {
  const entries = [];
  for (const task of row.background ?? []) {
    const agents = task.agents.length > 0 ? `${task.agents.filter((agent) => agent.state === "done").length}/${task.agents.length} agents done` : "";
    const uses = task.toolUses ? `${task.toolUses} tool uses` : "";
    entries.push({
      background: {
        key: `bg:${row.key}:${task.id}`,
        depth: 1,
        label: `${KINDS[task.kind] ?? task.kind}: ${task.description}`,
        status: task.status,
        detail: [agents, tokens(task.tokens), uses].filter(Boolean).join(" · "),
      },
    });
    for (const agent of task.agents) {
      entries.push({
        background: {
          key: `bg:${row.key}:${task.id}:${agent.label}`,
          depth: 2,
          label: agent.label,
          status: agent.state,
          detail: [agent.phase, tokens(agent.tokens)].filter(Boolean).join(" · "),
        },
      });
    }
  }
  return entries;
}

/** A <tr> for a background entry: its label, its status and what it came to (the columns between stay empty). */
export function createBackgroundRow(columns) {
  return h(
    "tr",
    { class: "background" },
    h("th", { scope: "row" }, h("span", { class: "background-name" })),
    h("td", { class: "status" }),
    h("td", { class: "activity", colspan: columns - 2 }, h("span")),
  );
}

export function fillBackgroundRow(tr, entry) {
  const name = tr.querySelector(".background-name");
  const text = `${"  ".repeat(entry.depth - 1)}↳ ${entry.label}`;
  if (name.textContent !== text) name.textContent = text;
  tr.dataset.depth = String(entry.depth);
  tr.dataset.status = entry.status;
  const status = statusLabel(entry.status);
  if (tr.children[1].textContent !== status) tr.children[1].textContent = status;
  const detail = tr.querySelector("td.activity span");
  if (detail.textContent !== entry.detail) detail.textContent = entry.detail;
}
