/** One line, at most `max` characters: whitespace collapsed, an ellipsis when cut. */
export function oneLine(text: string, max = 120): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

/** `text` cut to `max` characters, saying how many more it had (and, in `hint`, where to read them). */
export function clip(text: string, max: number, hint = ""): string {
  return text.length <= max ? text : `${text.slice(0, max)}… [${text.length - max} more characters${hint}]`;
}
