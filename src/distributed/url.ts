// Redis URLs at the edge: checked before anything connects, and shown without their password.
/** The URL as it may be shown: a password in it is masked. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== "") parsed.password = "***";
    return parsed.toString().replace(/\/$/, "");
  } catch {
    return "(an invalid URL)";
  }
}

/** Why `url` is not a Redis URL, or undefined when it is one. */
export function redisUrlProblem(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `"${url}" is not a URL; give one like redis://127.0.0.1:6379`;
  }
  if (parsed.protocol !== "redis:" && parsed.protocol !== "rediss:") {
    return `${redactUrl(url)} is not a Redis URL; it must start with redis:// or rediss://`;
  }
  return undefined;
}
