// The rig of the distributed tests: a real redis-server per test, `cadre worker` processes as hosts, `cadre run --redis`.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa, type ResultPromise } from "execa";
import { Redis } from "ioredis";
import { onTestFinished } from "vitest";
import { offlineClaudeEnv } from "../../src/rehearsal/env.ts";
import type { RehearsalServer } from "../../src/rehearsal/server.ts";
import { bin, repo } from "./cli.ts";
import { descendants, isAlive, isGone } from "./processes.ts";
import { tempHome } from "./rehearsal.ts";

/** A free loopback port (the kernel's pick, released again). */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface RedisServer {
  url: string;
  port: number;
  /** A client for checks (a new one after each restart); closed after the test. */
  client: Redis;
  /** SIGKILLs the server: a crash, or a machine that dies. */
  kill(): Promise<void>;
  /** Starts it again on the same port and data dir: empty, unless it persists (appendOnly). */
  restart(): Promise<void>;
}

/**
 * Starts Debian's redis-server on its own port and data dir, by default
 * without persistence (as a development Redis runs); `appendOnly` writes
 * every command to its append-only file first. Killed and removed after the test.
 */
export async function startRedis(options: { appendOnly?: boolean } = {}): Promise<RedisServer> {
  const found = await execa("redis-server", ["--version"], { reject: false });
  if (found.exitCode !== 0) throw new Error("no redis-server on PATH: install Debian's redis-server (apt-get install redis-server; .ci/run does)");
  const dir = await mkdtemp(join(tmpdir(), "cadre-redis-"));
  const port = await freePort();
  const persistence = options.appendOnly ? ["--appendonly", "yes", "--appendfsync", "always"] : ["--appendonly", "no"];
  const launch = () =>
    execa("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", ...persistence, "--dir", dir], {
      reject: false,
      stdout: "ignore",
      stderr: "pipe",
    });
  let server = launch();
  onTestFinished(async () => {
    server.kill("SIGKILL");
    await server;
    await rm(dir, { recursive: true, force: true });
  });
  const url = `redis://127.0.0.1:${port}`;
  const connect = async () => {
    const client = new Redis(url, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 1 });
    client.on("error", () => {});
    for (let tries = 0; ; tries++) {
      try {
        await client.connect();
        await client.ping();
        return client;
      } catch (error) {
        if (tries > 100) throw new Error(`redis-server did not start on port ${port}: ${(error as Error).message}`);
        client.disconnect();
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  };
  const redis: RedisServer = {
    url,
    port,
    client: await connect(),
    async kill() {
      redis.client.disconnect();
      server.kill("SIGKILL");
      await server;
    },
    async restart() {
      server = launch();
      redis.client = await connect();
    },
  };
  onTestFinished(() => redis.client.disconnect());
  return redis;
}

export interface HostProcess {
  name: string;
  process: ResultPromise;
  /** Everything it printed so far. */
  output(): string;
  /** Resolves once a line matching `pattern` has been printed. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
}

/**
 * Starts `cadre worker` as a host, in its own process group (a host that
 * dies takes its claude processes with it), whose workers talk to the
 * rehearsal server's `script` with a private HOME. Stopped after the test;
 * no process of its group may survive.
 */
export async function startHost(
  redis: RedisServer,
  server: RehearsalServer,
  options: { name: string; script: string; concurrency?: number; stallS?: number; env?: Record<string, string>; args?: string[] },
): Promise<HostProcess> {
  const home = await tempHome("cadre-host-");
  await mkdir(join(home, "tmp"));
  const args = [
    bin,
    "worker",
    "--redis",
    redis.url,
    "--name",
    options.name,
    "--concurrency",
    String(options.concurrency ?? 1),
    "--stall-s",
    String(options.stallS ?? 30),
    ...(options.args ?? []),
  ];
  const child = execa("node", args, {
    cwd: repo,
    env: { ...offlineClaudeEnv({ baseUrl: server.baseUrlFor(options.script), home }), TMPDIR: join(home, "tmp"), ...options.env },
    extendEnv: false,
    detached: true,
    reject: false,
    all: true,
    buffer: false,
  });
  let output = "";
  const waiters = new Set<() => void>();
  child.all!.setEncoding("utf8");
  child.all!.on("data", (chunk: string) => {
    output += chunk;
    for (const wake of waiters) wake();
  });
  const host: HostProcess = {
    name: options.name,
    process: child,
    output: () => output,
    waitFor: (pattern, timeoutMs = 30_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const match = pattern.exec(output);
          if (!match) return;
          cleanup();
          resolve(match[0]);
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`host ${options.name} printed no ${pattern} within ${timeoutMs} ms; it printed:\n${output}`));
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      }),
  };
  onTestFinished(async () => {
    const group = await descendants(child.pid!);
    if (isAlive(child.pid)) child.kill("SIGTERM");
    const stopped = await Promise.race([child.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 15_000))]);
    if (!stopped) process.kill(-child.pid!, "SIGKILL");
    await child;
    for (const { pid } of group) {
      if (!(await isGone(pid))) {
        process.kill(pid, "SIGKILL");
        throw new Error(`process ${pid} of host ${options.name} survived it`);
      }
    }
  });
  await host.waitFor(/serving runs from/, 60_000);
  return host;
}

/** Kills a host and every process of its group at once: a machine that dies. */
export function killHost(host: HostProcess): void {
  process.kill(-host.process.pid!, "SIGKILL");
}

/** A swarm config file in a fresh directory; returns its path. */
export async function swarmFile(lines: string[]): Promise<string> {
  const dir = await tempHome("cadre-swarm-");
  const file = join(dir, "swarm.yaml");
  await writeFile(file, `${lines.join("\n")}\n`);
  return file;
}

/** `cadre run <file> --redis URL` with extra arguments; never rejects. */
export function runDistributed(file: string, redis: RedisServer, out: string, extra: string[] = [], env?: Record<string, string>) {
  return execa("node", [bin, "run", file, "--redis", redis.url, "--out", out, ...extra], { cwd: repo, reject: false, ...(env && { env }) });
}
