import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { onTestFinished } from "vitest";
import type { RehearsalScriptsInput } from "../../src/rehearsal/script.ts";
import { type RehearsalServer, startRehearsalServer } from "../../src/rehearsal/server.ts";

/** A rehearsal server on an ephemeral loopback port, closed after the test. */
export async function createRehearsal(scripts: RehearsalScriptsInput = {}): Promise<RehearsalServer> {
  const server = await startRehearsalServer({ scripts });
  onTestFinished(() => server.close());
  return server;
}

/** A fresh directory to serve as HOME, removed after the test. */
export async function tempHome(prefix = "cadre-home-"): Promise<string> {
  const home = await mkdtemp(join(tmpdir(), prefix));
  onTestFinished(() => rm(home, { recursive: true, force: true, maxRetries: 3 }));
  return home;
}
