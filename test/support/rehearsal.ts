import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startRehearsalServer, type RehearsalServer } from "../../src/rehearsal/server.ts";
import type { RehearsalScriptsInput } from "../../src/rehearsal/script.ts";
import { registerCleanup } from "./cleanup.ts";

/** A rehearsal server on an ephemeral loopback port, closed after the test (or file). */
export async function createRehearsal(scripts: RehearsalScriptsInput = {}): Promise<RehearsalServer> {
  const server = await startRehearsalServer({ scripts });
  registerCleanup(() => server.close());
  return server;
}

/** A fresh directory to serve as HOME, removed after the test (or file). */
export async function tempHome(prefix = "cadre-home-"): Promise<string> {
  const home = await mkdtemp(join(tmpdir(), prefix));
  registerCleanup(() => rm(home, { recursive: true, force: true, maxRetries: 3 }));
  return home;
}
