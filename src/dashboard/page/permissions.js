// Pending permission requests of `cadre mcp`'s children, answered from the page.
import { h, toolName } from "./format.js";

/**
 * Lists what waits for an answer; `answer(row, requestId, answer)` sends one and
 * resolves or throws with the server's reason. Forms stay as typed while new
 * snapshots arrive: an item is built once per request and removed once answered.
 */
export class PendingList {
  constructor(section, list, answer) {
    this.section = section;
    this.list = list;
    this.answer = answer;
    this.items = new Map();
  }

  render(snapshot) {
    const waiting = snapshot.rows.flatMap((row) => row.pending.map((pending) => ({ row, pending })));
    this.section.hidden = waiting.length === 0;
    const seen = new Set();
    for (const { row, pending } of waiting) {
      const id = `${row.key} ${pending.requestId}`;
      seen.add(id);
      if (!this.items.has(id)) {
        const item = this.#item(row, pending, snapshot.answerable);
        this.items.set(id, item);
        this.list.append(item);
      }
    }
    for (const [id, item] of this.items) {
      if (seen.has(id)) continue;
      item.remove();
      this.items.delete(id);
    }
  }

  #item(row, pending, answerable) {
    const error = h("p", { class: "error", role: "alert" });
    const message = h("input", { type: "text", name: "message", placeholder: "a reason, told to the agent on deny" });
    const questions = (pending.questions ?? []).map((q, i) =>
      h(
        "fieldset",
        {},
        h("legend", {}, q.question),
        ...q.options.map((option) =>
          h("label", {}, h("input", { type: q.multiSelect ? "checkbox" : "radio", name: `q${i}`, value: option }), ` ${option}`),
        ),
      ),
    );
    const send = async (decision, extra = {}) => {
      error.textContent = "";
      for (const button of form.querySelectorAll("button")) button.disabled = true;
      try {
        const text = message.value.trim();
        await this.answer(row.key, pending.requestId, { decision, ...(text && { message: text }), ...extra });
        form.replaceChildren(h("p", { class: "muted" }, `${decision === "allow" ? "allowed" : "denied"}; the agent goes on`));
      } catch (failure) {
        error.textContent = failure.message;
        for (const button of form.querySelectorAll("button")) button.disabled = false;
      }
    };
    const answers = () =>
      Object.fromEntries(
        (pending.questions ?? []).map((q, i) => {
          const chosen = [...form.querySelectorAll(`input[name="q${i}"]:checked`)].map((input) => input.value);
          return [q.question, q.multiSelect ? chosen : (chosen[0] ?? "")];
        }),
      );
    const buttons =
      pending.kind === "question"
        ? [
            h("button", { type: "button", onclick: () => send("allow", { answers: answers() }) }, "Answer"),
            h("button", { type: "button", onclick: () => send("deny") }, "Skip"),
          ]
        : pending.kind === "plan"
          ? [
              h("button", { type: "button", onclick: () => send("allow") }, "Approve"),
              h("button", { type: "button", onclick: () => send("deny") }, "Ask for a revision"),
              h("button", { type: "button", onclick: () => send("deny", { interrupt: true }) }, "Reject"),
            ]
          : [
              h("button", { type: "button", class: "allow", onclick: () => send("allow") }, "Allow"),
              h("button", { type: "button", class: "deny", onclick: () => send("deny") }, "Deny"),
            ];
    const form = h(
      "form",
      { "aria-label": `answer ${row.name}`, onsubmit: (event) => event.preventDefault() },
      ...questions,
      pending.kind === "question" ? null : message,
      h("div", { class: "buttons" }, ...buttons),
      error,
    );
    return h(
      "li",
      { "data-request": pending.requestId },
      h("p", {}, h("strong", {}, row.name), ` asks to ${pending.ask.replace(pending.toolName, toolName(pending.toolName))}`),
      h("pre", {}, pending.input),
      answerable ? form : h("p", { class: "muted" }, "answer it where the run was started"),
    );
  }
}
