// The message box and the Interrupt and Stop buttons of the selected task while it runs in a live cadre run --ui (Stop alone while it waits for a slot).

/** Statuses in which a task has a process to reach. */
const REACHABLE = new Set(["running", "awaiting_permission"]);
/** Statuses in which a task waits for a slot (or a retry): Stop ends it, but it has no turn to message or interrupt. */
const WAITING_FOR_SLOT = new Set(["queued", "retrying"]);

/** What the box says of a message that holds nothing but whitespace: the words the server and cadre send use. */
const EMPTY = "the message is empty (only whitespace): type what to send";

/** Whether a row that has said nothing yet may be selected all the same: Stop can end it in a run the page may steer. */
export function stoppableBeforeStart(snapshot, row) {
  return Boolean(snapshot?.steerable && WAITING_FOR_SLOT.has(row.status));
}

export class SteerBox {
  /**
   * @param {{ form: HTMLFormElement, text: HTMLTextAreaElement, interrupt: HTMLButtonElement, stop: HTMLButtonElement, state: HTMLElement }} elements
   * @param {(row: string, request: { action: string, text?: string }) => Promise<unknown>} steer sends one request; throws with the server's reason
   */
  constructor(elements, steer) {
    this.elements = elements;
    this.steer = steer;
    this.row = null;
    /** What only a task with a turn can use: hidden while the selected task waits for a slot. */
    const send = /** @type {HTMLButtonElement | null} */ (elements.form.querySelector('button[type="submit"]'));
    this.turnParts = [elements.form.querySelector("label"), elements.text, send, elements.interrupt];
    elements.form.addEventListener("submit", (event) => {
      event.preventDefault();
      // Sent as typed, its spaces and newlines included (as cadre send sends it); only a box of whitespace is refused.
      const text = elements.text.value;
      if (/\S/.test(text)) this.#send({ action: "send", text }, "sent; the agent takes it at its next step", () => (elements.text.value = ""));
      else elements.state.textContent = EMPTY;
    });
    elements.interrupt.addEventListener("click", () => this.#send({ action: "interrupt" }, "interrupted"));
    elements.stop.addEventListener("click", () => this.#send({ action: "stop" }, "stopped; the rest of the run goes on"));
  }

  /**
   * Shown for the selected row while it runs in a run the page may steer, Stop alone while it waits for a slot;
   * what was typed stays as the snapshots come.
   */
  render(snapshot, row) {
    const waits = Boolean(row && WAITING_FOR_SLOT.has(row.status));
    const shown = Boolean(snapshot?.steerable && row && (REACHABLE.has(row.status) || waits));
    if (row?.key !== this.row) this.elements.state.textContent = "";
    this.row = row?.key ?? null;
    this.elements.form.hidden = !shown;
    for (const part of this.turnParts) if (part) part.hidden = waits;
  }

  async #send(request, done, after = () => {}) {
    const row = this.row;
    if (row === null) return;
    const buttons = [...this.elements.form.querySelectorAll("button")];
    for (const button of buttons) button.disabled = true;
    try {
      await this.steer(row, request);
      after();
      this.elements.state.textContent = done;
    } catch (failure) {
      this.elements.state.textContent = failure.message;
    } finally {
      for (const button of buttons) button.disabled = false;
    }
  }
}
