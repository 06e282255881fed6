// The conversation of the selected row, entry by entry as it streams: text, tool calls with their
// input and result, peer questions, hooks, permission requests and the turn's result.
import { clock, h, money, toolName } from "./format.js";

/** Entries kept in the page, as many as the server keeps per conversation: a long one drops its oldest (the transcript file has them). */
const MAX_SHOWN = 2_000;

export class ConversationView {
  /** @param {HTMLOListElement} list @param {HTMLElement} state */
  constructor(list, state) {
    this.list = list;
    this.state = state;
    this.source = null;
    this.simulated = false;
    this.lastText = null;
    this.calls = new Map();
    this.permissions = new Map();
  }

  /** Shows the conversation streaming from `url`; `simulated`: its costs are a rehearsal's. */
  open(url, simulated = false) {
    this.simulated = simulated;
    this.close();
    this.list.replaceChildren();
    this.lastText = null;
    this.calls.clear();
    this.permissions.clear();
    this.#state("loading…");
    const source = new EventSource(url);
    this.source = source;
    let first = true;
    source.addEventListener("entry", (event) => {
      const entry = JSON.parse(event.data);
      if (first && entry.seq > 0) this.list.append(h("li", { class: "entry note" }, `${entry.seq} earlier entries are only in the transcript file.`));
      first = false;
      this.#add(entry);
      this.#state("live: new entries appear as they come");
    });
    source.addEventListener("end", () => {
      source.close();
      this.#state(this.list.childElementCount === 0 ? "nothing was said" : "finished");
    });
    source.addEventListener("error", () => {
      if (source.readyState === EventSource.CLOSED) this.#state("the conversation could not be loaded");
      else this.#state("connection lost; reconnecting…");
    });
  }

  close() {
    this.source?.close();
    this.source = null;
  }

  clear(text) {
    this.close();
    this.list.replaceChildren();
    this.#state(text);
  }

  #state(text) {
    this.state.textContent = text;
  }

  #add(entry) {
    const atBottom = this.list.scrollTop + this.list.clientHeight >= this.list.scrollHeight - 24;
    const item = this.#render(entry);
    if (item) {
      item.classList.add("entry", entry.kind.replaceAll("_", "-"));
      if (entry.sub) item.classList.add("sub");
      item.dataset.seq = entry.seq;
      this.list.append(item);
      while (this.list.childElementCount > MAX_SHOWN) this.list.firstElementChild.remove();
    }
    // Tool calls waiting for their result: only the latest ones can still get it shown.
    for (const id of this.calls.keys()) {
      if (this.calls.size <= MAX_SHOWN) break;
      this.calls.delete(id);
    }
    if (atBottom) this.list.scrollTop = this.list.scrollHeight;
  }

  #render(entry) {
    const time = entry.at ? h("time", { datetime: new Date(entry.at).toISOString() }, clock(entry.at)) : null;
    switch (entry.kind) {
      case "text":
        this.lastText = entry.text;
        return h("li", {}, time, h("p", { class: "said" }, entry.text));
      case "thinking":
        return h("li", {}, time, h("details", {}, h("summary", {}, "thinking"), h("p", { class: "said" }, entry.text)));
      case "tool_call": {
        const result = h("div", { class: "result pending" }, "waiting for the result…");
        this.calls.set(entry.id, { result, peer: entry.peer });
        const head = entry.peer
          ? h("p", { class: "head" }, `asks ${entry.peer.name}: `, h("q", {}, entry.peer.text))
          : h("p", { class: "head" }, "calls ", h("code", {}, toolName(entry.name)));
        return h("li", {}, time, head, h("details", { open: !entry.peer }, h("summary", {}, "input"), h("pre", {}, entry.input)), result);
      }
      case "tool_result": {
        const call = this.calls.get(entry.id);
        const label = call?.peer ? (call.peer.asks ? `${call.peer.name} answers:` : "delivered:") : entry.isError ? "error:" : "result:";
        const body = [h("span", { class: "label" }, label), h("pre", {}, call?.peer?.asks ? peerAnswer(entry.text) : entry.text)];
        if (!call) return h("li", {}, time, ...body);
        call.result.replaceChildren(...body);
        call.result.classList.remove("pending");
        call.result.classList.toggle("error", entry.isError);
        return null;
      }
      case "hook":
        return h("li", {}, time, h("p", { class: "head" }, `hook ${entry.name}: ${entry.outcome}`), entry.text ? h("pre", {}, entry.text) : null);
      case "permission": {
        const state = h("span", { class: "answer" }, "waiting for an answer");
        this.permissions.set(entry.requestId, state);
        return h("li", {}, time, h("p", { class: "head" }, `asks permission to ${entry.ask} — `, state), h("pre", {}, entry.input));
      }
      case "permission_settled": {
        const state = this.permissions.get(entry.requestId);
        if (state) state.textContent = "answered";
        return null;
      }
      case "result": {
        const figures = [
          entry.turns !== null ? `${entry.turns} turn${entry.turns === 1 ? "" : "s"}` : "",
          entry.costUsd !== null ? money(entry.costUsd, this.simulated) : "",
        ];
        const head = `${entry.isError ? "the turn failed" : "turn finished"}${figures.some(Boolean) ? ` (${figures.filter(Boolean).join(", ")})` : ""}`;
        // A result repeats the turn's last text: shown once.
        const text = entry.text && entry.text !== this.lastText ? h("p", { class: "said" }, entry.text) : null;
        return h("li", { class: entry.isError ? "error" : "" }, time, h("p", { class: "head" }, head), text);
      }
      default:
        return h("li", {}, time, h("p", {}, entry.text ?? entry.kind));
    }
  }
}

/** ask_peer's result is its structured content as JSON: the answer is what a reader wants. */
function peerAnswer(text) {
  try {
    const parsed = JSON.parse(text);
    return typeof parsed.answer === "string" ? parsed.answer : text;
  } catch {
    return text;
  }
}
