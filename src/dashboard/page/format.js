// How numbers, times and statuses read on the page.

const usd = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD", minimumFractionDigits: 2, maximumFractionDigits: 4 });

/** A cost; `simulated` marks a rehearsal's made-up figures with "~". */
export function money(value, simulated = false) {
  return `${simulated ? "~" : ""}${usd.format(value ?? 0)}`;
}

/** 0.4 s, 12.3 s, 4 min 05 s, 1 h 02 min. */
export function span(ms) {
  if (ms === null || ms === undefined) return "";
  const seconds = Math.max(0, ms) / 1000;
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  const whole = Math.floor(seconds);
  if (whole < 3600) return `${Math.floor(whole / 60)} min ${String(whole % 60).padStart(2, "0")} s`;
  return `${Math.floor(whole / 3600)} h ${String(Math.floor((whole % 3600) / 60)).padStart(2, "0")} min`;
}

/** The server's time now: its time at the snapshot plus what passed since the page got it. */
export function serverNow(snapshot) {
  return snapshot.now + (Date.now() - snapshot.receivedAt);
}

export function clock(at) {
  return at === null || at === undefined ? "" : new Date(at).toLocaleTimeString([], { hour12: false });
}

/** A symbol beside each status word, so that no state is told by color alone. */
const SYMBOLS = {
  waiting: "…",
  queued: "○",
  starting: "◌",
  running: "▶",
  retrying: "↻",
  awaiting_permission: "?",
  idle: "◇",
  succeeded: "✔",
  failed: "✘",
  cancelled: "■",
  skipped: "↷",
  closed: "□",
};

export function statusLabel(status) {
  return `${SYMBOLS[status] ?? "•"} ${status.replaceAll("_", " ")}`;
}

/** mcp__cadre__ask_peer → ask_peer (cadre), Read → Read. */
export function toolName(name) {
  const parts = name.split("__");
  return parts.length >= 3 && parts[0] === "mcp" ? `${parts.slice(2).join("__")} (${parts[1]})` : name;
}

/** document.createElement with attributes and children, the page's one DOM helper. */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
    else if (name === "class") element.className = value;
    else element.setAttribute(name, value === true ? "" : String(value));
  }
  element.append(...children.flat().filter((child) => child !== undefined && child !== null && child !== false));
  return element;
}

/**
 * Puts `nodes` in `parent` in this order, moving only what is out of place: a node that stays is
 * never taken out of the page (a click on it while an update arrives is not lost, its focus stays).
 */
export function placeInOrder(parent, nodes) {
  let cursor = parent.firstChild;
  for (const node of nodes) {
    if (node === cursor) cursor = cursor.nextSibling;
    else parent.insertBefore(node, cursor);
  }
  while (cursor) {
    const next = cursor.nextSibling;
    cursor.remove();
    cursor = next;
  }
}
