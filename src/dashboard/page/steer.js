// The message box and the Interrupt and Stop buttons of the selected task, while it runs in a live cadre run --ui.

/** Statuses in which a task has a process to reach. */
const REACHABLE = new Set(["running", "awaiting_permission"]);

export class SteerBox {
  /**
   * @param {{ form: HTMLFormElement, text: HTMLTextAreaElement, interrupt: HTMLButtonElement, stop: HTMLButtonElement, state: HTMLElement }} elements
   * @param {(row: string, request: { action: string, text?: string }) => Promise<unknown>} steer sends one request; throws with the server's reason
   */
  constructor(elements, steer) {
    this.elements = elements;
    this.steer = steer;
    this.row = null;
    elements.form.addEventListener("submit", (event) => {
      event.preventDefault();
      const text = elements.text.value.trim();
      if (text) this.#send({ action: "send", text }, "sent; the agent takes it at its next step", () => (elements.text.value = ""));
    });
    elements.interrupt.addEventListener("click", () => this.#send({ action: "interrupt" }, "interrupted"));
    elements.stop.addEventListener("click", () => this.#send({ action: "stop" }, "stopped; the rest of the run goes on"));
  }

  /** Shown for the selected row while it runs in a run the page may steer; what was typed stays as the snapshots come. */
  render(snapshot, row) {
    const shown = Boolean(snapshot?.steerable && row && REACHABLE.has(row.status));
    if (row?.key !== this.row) this.elements.state.textContent = "";
    this.row = row?.key ?? null;
    this.elements.form.hidden = !shown;
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
