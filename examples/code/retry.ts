// Retries a request until it succeeds. Sample code for examples/code-review.yaml.
export async function fetchWithRetry(url: string): Promise<Response> {
  for (;;) {
    try {
      return await fetch(url);
    } catch {
      // No limit, no back-off: a dead server means a busy loop forever.
    }
  }
}
