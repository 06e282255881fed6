// Formatting for the run's views: colors for a stream, durations, costs and lines cut to fit.
import pc from "picocolors";
import type { RowStatus } from "../../../run/index.ts";
import { printable } from "../../../util/one-line.ts";

export type Colors = ReturnType<typeof pc.createColors>;

/**
 * Colors for a stream: off with NO_COLOR (any non-empty value, no-color.org),
 * on with FORCE_COLOR, else on for a terminal that is not "dumb".
 */
export function colorsFor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): Colors {
  const enabled = env.NO_COLOR
    ? false
    : env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== "0"
      ? true
      : stream.isTTY === true && env.TERM !== "dumb";
  return pc.createColors(enabled);
}

/** `$0.12`; a simulated cost (a rehearsal's) is `~$0.12`. */
export function formatUsd(usd: number, simulated = false): string {
  return `${simulated ? "~" : ""}$${usd.toFixed(usd > 0 && usd < 0.01 ? 4 : 2)}`;
}

/** The share of input read from the prompt cache: "87%", or "" before there is any input. */
export function formatCacheShare(share: number | undefined): string {
  return share === undefined ? "" : `${Math.round(100 * share)}%`;
}

/** 950ms, 12.3s, 4m05s, 1h02m. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.floor(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}

/** A task's name as the terminal lists it: a task an agent posted names its poster ("fix-cache (by lead)"). */
export function postedName(name: string, postedBy: string | null | undefined): string {
  return postedBy ? `${name} (by ${postedBy})` : name;
}

/** Cuts or pads to exactly `width` characters (by UTF-16 units; names and activity are mostly ASCII). */
export function fit(text: string, width: number): string {
  if (width <= 0) return "";
  return text.length > width ? `${text.slice(0, Math.max(0, width - 1))}…` : text.padEnd(width);
}

export function paint(status: RowStatus, text: string, c: Colors): string {
  switch (status) {
    case "succeeded":
      return c.green(text);
    case "failed":
      return c.red(text);
    case "cancelled":
    case "skipped":
      return c.yellow(text);
    case "running":
    case "retrying":
      return c.cyan(text);
    default:
      return c.dim(text);
  }
}

/**
 * Aligns plain cells in columns as wide as their widest cell; the last column
 * gets what is left of `width`. `style` colors a cell after it is cut to size,
 * so escape codes never count as width.
 */
export function table(
  rows: string[][],
  width: number,
  style: (row: number, column: number, cell: string) => string = (_r, _c, cell) => cell,
): string[] {
  // Cells hold names and text from configs and models: shown, never obeyed, by the terminal.
  rows = rows.map((row) => row.map(printable));
  const columns = rows[0]?.length ?? 0;
  const widths = Array.from({ length: columns }, (_, i) => Math.max(...rows.map((row) => row[i]?.length ?? 0)));
  let fixed = widths.slice(0, -1).reduce((sum, w) => sum + w + 2, 0);
  // On a narrow terminal the names (the first column) give way down to 8 before the last column is cut below 10.
  const short = Math.min(fixed + 10 - width, (widths[0] ?? 0) - 8);
  if (columns > 1 && short > 0) {
    widths[0] = (widths[0] ?? 0) - short;
    fixed -= short;
  }
  widths[columns - 1] = Math.max(0, Math.min(widths[columns - 1] ?? 0, width - fixed));
  return rows.map((row, r) =>
    row.map((cell, i) => style(r, i, i === columns - 1 ? fit(cell, widths[i]!).trimEnd() : fit(cell, widths[i]!))).join("  "),
  );
}
