// Talking to the dashboard server: the token, JSON requests and event streams.

const TOKEN_KEY = `cadre-token:${location.host}`;

/**
 * The token comes in the address's fragment (#token=…), which browsers never
 * send to a server. The page keeps it for this tab and takes it out of the
 * address bar, so that it does not end up in screenshots or shared links.
 */
export function takeToken() {
  const fromHash = new URLSearchParams(location.hash.slice(1)).get("token");
  if (fromHash) {
    sessionStorage.setItem(TOKEN_KEY, fromHash);
    history.replaceState(null, "", location.pathname + location.search);
    return fromHash;
  }
  return sessionStorage.getItem(TOKEN_KEY);
}

export class Api {
  constructor(token) {
    this.token = token;
  }

  /** An EventSource cannot send headers: its URL carries the token. */
  streamUrl(path, params = {}) {
    const query = new URLSearchParams({ ...params, token: this.token ?? "" });
    return `${path}?${query}`;
  }

  async json(path, options = {}) {
    const response = await fetch(path, {
      ...options,
      headers: { ...options.headers, authorization: `Bearer ${this.token ?? ""}`, "content-type": "application/json" },
    });
    const body = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(body.error ?? `${response.status} ${response.statusText}`);
    return body;
  }

  runs() {
    return this.json("/api/runs");
  }

  steer(runId, row, request) {
    return this.json(`/api/runs/${encodeURIComponent(runId)}/steer`, { method: "POST", body: JSON.stringify({ row, ...request }) });
  }

  answer(runId, row, requestId, answer) {
    return this.json(`/api/runs/${encodeURIComponent(runId)}/answer`, { method: "POST", body: JSON.stringify({ row, requestId, answer }) });
  }
}
