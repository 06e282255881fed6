// A proxy before the scripted model that fails, or holds, the requests whose body carries some text: one agent of many fails (or waits) by its prompt.
import http from "node:http";
import { onTestFinished } from "vitest";

export interface ModelProxyRules {
  /** Requests whose body carries one of these get an API error (400: the CLI does not retry it for long). */
  fail?: readonly string[];
  /** Requests whose body carries one of these get no answer (until the test ends). */
  hold?: readonly string[];
}

/** A proxy on a loopback port in front of `target` (the rehearsal server's URL), closed after the test; its URL, and `rules` to change. */
export async function modelProxy(target: string, rules: ModelProxyRules): Promise<{ url: string; rules: ModelProxyRules }> {
  const state = { url: "", rules };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const text = body.toString("utf8");
      if (state.rules.hold?.some((needle) => text.includes(needle))) return;
      if (state.rules.fail?.some((needle) => text.includes(needle))) {
        res.writeHead(400, { "content-type": "application/json" });
        res.end(JSON.stringify({ type: "error", error: { type: "invalid_request_error", message: "proxy: this agent's request fails" } }));
        return;
      }
      const upstream = http.request(new URL(req.url ?? "/", target), { method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      upstream.on("error", () => res.destroy());
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  onTestFinished(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  state.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return state;
}
