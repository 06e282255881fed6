// Closing a worker whose CLI ignores stdin closing and SIGTERM ends in SIGKILL on Deno
// too (Deno's ChildProcess.kill() ignores a second signal; cadre signals by pid).
// Run by `deno task test` (node:test maps onto Deno.test); vitest does not pick it up.
import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { Worker } from "../../src/worker/index.ts";
import { isGone, killAll, ROOT } from "./support.ts";

const FAKE_CLAUDE = join(ROOT, "test/fixtures/fake-claude.mjs");

test("close() escalates to SIGKILL when the CLI ignores SIGTERM", async () => {
  const worker = await Worker.start({ claudePath: FAKE_CLAUDE, env: { FAKE_CLAUDE_MODE: "hang" }, closeGraceMs: 200 });
  const pid = worker.pid!;
  try {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const stuck = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error("close() did not end the process within 10 s")), 10_000);
    });
    const details = await Promise.race([worker.close(), stuck]).finally(() => clearTimeout(timer));
    assert.equal(details.signal, "SIGKILL");
    assert.ok(await isGone(pid, 2_000), `fake claude ${pid} is still running`);
  } finally {
    killAll([pid]);
  }
});
