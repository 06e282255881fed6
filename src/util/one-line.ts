/**
 * Control characters but tab (C0, DEL, C1: every escape sequence starts with one; a newline would start a line
 * of its own, forged) and the Unicode marks that reorder text on screen (bidi overrides and isolates).
 */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching them is the point.
const UNPRINTABLE = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/**
 * Text from a model, a tool, a script or a config, safe to print as one line on a terminal: each
 * control character shown as its code (`\x1b`, a newline as `\n`), so that a reply cannot set
 * the window title, clear the screen, hide what follows it or print a line that seems cadre's.
 */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (char) => {
    if (char === "\n") return "\\n";
    const code = char.charCodeAt(0).toString(16);
    return code.length <= 2 ? `\\x${code.padStart(2, "0")}` : `\\u${code.padStart(4, "0")}`;
  });
}

/** One line, at most `max` characters, printable: whitespace collapsed, control characters shown as codes, an ellipsis when cut. */
export function oneLine(text: string, max = 120): string {
  const flat = printable(text.replace(/\s+/g, " ").trim());
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

/** `text` cut to `max` characters, saying how many more it had (and, in `hint`, where to read them). */
export function clip(text: string, max: number, hint = ""): string {
  return text.length <= max ? text : `${text.slice(0, max)}… [${text.length - max} more characters${hint}]`;
}
