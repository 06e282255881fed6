/**
 * Start-up of the installed cadre on Node against the same sources on Deno (npm run bench,
 * or npm run bench:startup alone): `cadre --help`, `cadre validate <example>`, and the first
 * reply of `cadre mcp` to an MCP `initialize` (Claude Code starts `cadre mcp` with every
 * session). Node runs node_modules/.bin/cadre of the packed tarball installed into a fresh
 * project; Deno runs bin/cadre-deno.ts of this repository; both in that project's directory.
 *
 * Each command runs BENCH_STARTUP_RUNS times per runtime (default 15) after two warm-up runs
 * (which fill Deno's transpile cache), Node and Deno taking turns so that load drifting on a
 * shared machine hits both alike. Printed: the median wall time, the median CPU time (user +
 * sys; steadier than wall under load) and the median peak RSS, as /usr/bin/time reports them.
 *
 * NODE_EXTRA_CA_CERTS, when set, makes Node 20 parse the whole CA bundle before running any
 * JavaScript; Deno does not read it. Both runtimes run without it, and its cost is shown apart.
 *
 * Goal (reported, not asserted): Node no slower than Deno, node/deno <= 1.0.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { installPackedCadre, REPO } from "../test/support/installed-package.ts";

const RUNS = Math.max(1, Number(process.env.BENCH_STARTUP_RUNS ?? 15) || 15);
const WARMUP = 2;
const TIME = "/usr/bin/time";
const DENO = join(REPO, "node_modules", ".bin", "deno");
const INITIALIZE = `${JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "1" } },
})}\n`;

interface Sample {
  wallMs: number;
  cpuMs: number | undefined;
  rssMb: number | undefined;
}

type Env = Record<string, string | undefined>;

/**
 * Runs `command` under GNU time (when the machine has it) for CPU time and peak RSS. With `input`,
 * the wall time ends at the first stdout line that answers request 1, then stdin is closed.
 */
async function sample(command: string[], cwd: string, env: Env, input?: string): Promise<Sample> {
  const statsDir = await mkdtemp(join(tmpdir(), "cadre-bench-"));
  const statsFile = join(statsDir, "time");
  const timed = existsSync(TIME) ? [TIME, "-o", statsFile, "-f", "%U %S %M", ...command] : command;
  try {
    const started = performance.now();
    const child = spawn(timed[0]!, timed.slice(1), { cwd, env, stdio: ["pipe", "pipe", "ignore"] });
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    let wallMs: number;
    if (input === undefined) {
      child.stdout.resume();
      child.stdin.end();
      const code = await exited;
      wallMs = performance.now() - started;
      if (code !== 0) throw new Error(`${command.join(" ")} exited with ${code}`);
    } else {
      child.stdin.write(input);
      let seen = "";
      await new Promise<void>((resolve, reject) => {
        child.stdout.on("data", (chunk: Buffer) => {
          seen += chunk.toString();
          if (seen.includes('"id":1')) resolve();
        });
        void exited.then(() => reject(new Error(`${command.join(" ")} exited before answering: ${seen}`)));
      });
      wallMs = performance.now() - started;
      child.stdout.resume();
      child.stdin.end();
      await exited;
    }
    if (!existsSync(statsFile)) return { wallMs, cpuMs: undefined, rssMb: undefined };
    const [user, sys, rssKb] = (await readFile(statsFile, "utf8")).trim().split("\n").at(-1)!.split(" ").map(Number);
    return { wallMs, cpuMs: (user! + sys!) * 1000, rssMb: rssKb! / 1024 };
  } finally {
    await rm(statsDir, { recursive: true, force: true });
  }
}

function median(values: (number | undefined)[]): number | undefined {
  const known = values.filter((v): v is number => v !== undefined).sort((a, b) => a - b);
  if (known.length === 0) return undefined;
  const mid = known.length >> 1;
  return known.length % 2 === 1 ? known[mid] : (known[mid - 1]! + known[mid]!) / 2;
}

interface Summary {
  wallMs: number;
  cpuMs: number | undefined;
  rssMb: number | undefined;
}

function summarize(samples: Sample[]): Summary {
  return { wallMs: median(samples.map((s) => s.wallMs))!, cpuMs: median(samples.map((s) => s.cpuMs)), rssMb: median(samples.map((s) => s.rssMb)) };
}

/** Both runtimes, turn about, RUNS times after the warm-up. */
async function compare(
  commands: Record<"node" | "deno", string[]>,
  cwd: string,
  env: Env,
  input?: string,
): Promise<Record<"node" | "deno", Summary>> {
  const samples = { node: [] as Sample[], deno: [] as Sample[] };
  for (let run = 0; run < WARMUP + RUNS; run++) {
    const order = run % 2 === 0 ? (["node", "deno"] as const) : (["deno", "node"] as const);
    for (const runtime of order) {
      const result = await sample(commands[runtime], cwd, env, input);
      if (run >= WARMUP) samples[runtime].push(result);
    }
  }
  return { node: summarize(samples.node), deno: summarize(samples.deno) };
}

const ms = (value: number | undefined) => (value === undefined ? "–" : `${value.toFixed(0)} ms`);
const mb = (value: number | undefined) => (value === undefined ? "–" : `${value.toFixed(0)} MB`);
const ratio = (a: number | undefined, b: number | undefined) => (a === undefined || b === undefined ? "–" : (a / b).toFixed(2));

async function main(): Promise<void> {
  const { NODE_EXTRA_CA_CERTS: extraCerts, NODE_OPTIONS: _nodeOptions, ...rest } = process.env;
  const env: Env = { ...rest, NO_COLOR: "1" };
  await execa("npm", ["run", "--silent", "build"], { cwd: REPO });
  const installed = await installPackedCadre();
  try {
    const { dir, packageDir } = installed;
    const version = (await execa(DENO, ["--version"])).stdout.split("\n")[0];
    console.log(`\nstart-up: installed cadre on Node ${process.version} vs the sources on ${version}; median of ${RUNS} runs each`);
    console.log(`(1-minute load ${loadavg()[0]!.toFixed(1)} on ${availableParallelism()} CPUs: wall times move with it, CPU times less)\n`);

    const node = [join(dir, "node_modules", ".bin", "cadre")];
    const deno = [DENO, "run", "-A", "--config", join(REPO, "deno.json"), join(REPO, "bin", "cadre-deno.ts")];
    const example = join(packageDir, "examples", "code-review.yaml");
    const cases: { name: string; args: string[]; input?: string }[] = [
      { name: "cadre --help", args: ["--help"] },
      { name: "cadre validate", args: ["validate", example] },
      { name: "cadre mcp → initialize", args: ["mcp"], input: INITIALIZE },
    ];
    console.log(
      `${"".padEnd(24)} ${"node wall".padStart(10)} ${"deno wall".padStart(10)} ${"ratio".padStart(6)}   ${"node CPU".padStart(9)} ${"deno CPU".padStart(9)} ${"ratio".padStart(6)}   ${"node RSS".padStart(9)} ${"deno RSS".padStart(9)}`,
    );
    for (const { name, args, input } of cases) {
      const r = await compare({ node: [...node, ...args], deno: [...deno, ...args] }, dir, env, input);
      console.log(
        `${name.padEnd(24)} ${ms(r.node.wallMs).padStart(10)} ${ms(r.deno.wallMs).padStart(10)} ${ratio(r.node.wallMs, r.deno.wallMs).padStart(6)}   ` +
          `${ms(r.node.cpuMs).padStart(9)} ${ms(r.deno.cpuMs).padStart(9)} ${ratio(r.node.cpuMs, r.deno.cpuMs).padStart(6)}   ` +
          `${mb(r.node.rssMb).padStart(9)} ${mb(r.deno.rssMb).padStart(9)}`,
      );
    }
    const bare = await compare({ node: [process.execPath, "-e", "0"], deno: [DENO, "eval", "0"] }, dir, env);
    console.log(
      `${"bare runtime (-e 0)".padEnd(24)} ${ms(bare.node.wallMs).padStart(10)} ${ms(bare.deno.wallMs).padStart(10)} ${ratio(bare.node.wallMs, bare.deno.wallMs).padStart(6)}   ${ms(bare.node.cpuMs).padStart(9)} ${ms(bare.deno.cpuMs).padStart(9)}`,
    );
    if (extraCerts !== undefined) {
      const samples: Sample[] = [];
      for (let run = 0; run < RUNS; run++)
        samples.push(await sample([process.execPath, "-e", "0"], dir, { ...env, NODE_EXTRA_CA_CERTS: extraCerts }));
      const withCerts = summarize(samples);
      console.log(
        `\nNODE_EXTRA_CA_CERTS is set here: it adds ${ms(withCerts.wallMs - bare.node.wallMs)} to every Node start (node -e 0: ${ms(withCerts.wallMs)} with it); the figures above are without it.`,
      );
    }
    if (!existsSync(TIME)) console.log(`\n(no ${TIME}: install GNU time for CPU and RSS figures)`);
  } finally {
    await installed.remove();
  }
}

await main();
