/**
 * What the `--redis` benchmarks start beside cadre: a throwaway redis-server on a free loopback
 * port (no persistence, in the bench's own folder) and `cadre worker` hosts, each ready once it
 * says it is serving runs.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { resolve } from "node:path";

export const BIN = resolve(import.meta.dirname, "../bin/cadre.js");

async function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

/** Resolves when the child prints `pattern`; rejects if it exits first. */
function printed(child: ChildProcess, pattern: RegExp, what: string): Promise<void> {
  return new Promise((done, fail) => {
    let output = "";
    const early = (code: number | null) => fail(new Error(`${what} exited (${code}) before it was ready:\n${output}`));
    const read = (chunk: Buffer) => {
      output += chunk.toString("utf8");
      if (!pattern.test(output)) return;
      child.stdout?.off("data", read);
      child.off("exit", early);
      // What it prints from here on is not read, and must not fill the pipe.
      child.stdout?.resume();
      done();
    };
    child.stdout?.on("data", read);
    child.once("exit", early);
  });
}

export function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((done) => (child.exitCode !== null ? done(child.exitCode) : child.once("exit", (code) => done(code))));
}

export interface Redis {
  url: string;
  stop(): Promise<void>;
}

/** A redis-server for one benchmark, its files in `dir`. */
export async function startRedis(dir: string): Promise<Redis> {
  const port = await freePort();
  const redis = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  await printed(redis, /Ready to accept connections/, "redis-server");
  return {
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      redis.kill("SIGTERM");
      await exited(redis);
    },
  };
}

export interface Hosts {
  processes: ChildProcess[];
  stop(): Promise<void>;
}

/** `count` cadre worker hosts of `slots` each, serving runs of `redisUrl`; their claude workers get `env`. */
export async function startHosts(redisUrl: string, count: number, slots: number, env: Record<string, string>): Promise<Hosts> {
  const processes = Array.from({ length: count }, (_, i) =>
    spawn(process.execPath, [BIN, "worker", "--redis", redisUrl, "--name", `bench-${i + 1}`, "--concurrency", String(slots)], {
      env,
      stdio: ["ignore", "pipe", "inherit"],
    }),
  );
  const stop = async () => {
    for (const host of processes) host.kill("SIGTERM");
    await Promise.all(processes.map(exited));
  };
  try {
    await Promise.all(processes.map((host, i) => printed(host, /serving runs/, `host ${i + 1}`)));
  } catch (error) {
    await stop();
    throw error;
  }
  return { processes, stop };
}
