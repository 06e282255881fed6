// cadre as npm ships it: the packed tarball installed into a new project (with --engine-strict, and
// without the optional peers), then used the ways a user would: imported and required by plain Node,
// type-checked by TypeScript under each module resolution, run as `npx cadre`.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { cp, mkdir, readFile, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { delimiter, dirname, join } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SummarySchema } from "../../src/run/record/schema.ts";
import { claudeOnPath } from "../support/claude.ts";
import { type InstalledCadre, installPackedCadre, REPO } from "../support/installed-package.ts";

// npm install and tsc (which checks dependencies' .d.ts too) are slow on a loaded machine.
const INSTALL_TIMEOUT_MS = 600_000;
const SLOW_TEST_MS = 300_000;
const manifest = JSON.parse(await readFile(join(REPO, "package.json"), "utf8")) as {
  version: string;
  engines: { node: string };
  peerDependencies: Record<string, string>;
};
const SHIPPED_AGENTS = ["critic", "researcher", "reviewer", "summarizer", "test-writer"];

/** A tsc of the repository's dev dependencies, standing in for the consumer's: 7 (the project's) and 5 (node10 resolution, which 7 removed). */
function tscOf(name: string): string {
  const file = createRequire(import.meta.url).resolve(`${name}/package.json`);
  const { bin } = JSON.parse(readFileSync(file, "utf8")) as { bin: { tsc: string } };
  return join(dirname(file), bin.tsc);
}
const TSC = { 7: tscOf("typescript"), 5: tscOf("typescript5") };

/** Every file under `dir` whose name ends with `suffix`. */
function filesEnding(dir: string, suffix: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((file) => file.endsWith(suffix));
}

let installed: InstalledCadre;
/** The consumer's own environment: no loader or TypeScript hook that could hide a missing build, no claude. */
let userEnv: Record<string, string | undefined>;
/** A folder with a claude in it, for PATH: a user who already has claude. */
let claudeDir: string;
beforeAll(async () => {
  installed = await installPackedCadre(["@types/node"]);
  const { NODE_OPTIONS: _options, CADRE_CLAUDE_BIN: _claude, ...env } = process.env;
  const path = (env.PATH ?? "").split(delimiter).filter((dir) => !existsSync(join(dir, "claude")));
  userEnv = { ...env, PATH: path.join(delimiter), HOME: join(installed.dir, "home") };
  await mkdir(join(installed.dir, "home"));
  claudeDir = await claudeOnPath(join(installed.dir, "claude-bin"));
  // A user copies an example into the project: its agents are named, and found in cadre's package.
  await cp(join(installed.packageDir, "examples"), join(installed.dir, "examples"), { recursive: true });
}, INSTALL_TIMEOUT_MS);
afterAll(async () => {
  await installed?.remove();
});

/** The installed `cadre` (node_modules/.bin, what npx runs, without npm's own warnings on stderr). */
const cadre = (args: string[], env: Record<string, string | undefined> = userEnv) =>
  execa(join(installed.dir, "node_modules", ".bin", "cadre"), args, { cwd: installed.dir, env, extendEnv: false, reject: false });

describe("the npm package", () => {
  it("ships compiled JavaScript without source maps, and installs with --engine-strict without its optional peers", () => {
    const { packageDir, dir } = installed;
    for (const file of ["dist/index.js", "dist/index.d.ts", "dist/cli/main.js", "bin/cadre.js", "LICENSE", "README.md", "CHANGELOG.md"]) {
      expect(existsSync(join(packageDir, file)), file).toBe(true);
    }
    expect(filesEnding(packageDir, ".map"), "no maps: they would point at sources the package does not ship").toEqual([]);
    expect(existsSync(join(packageDir, "src")), "src/ is not shipped").toBe(false);
    expect(existsSync(join(dir, "node_modules", "tsx")), "tsx is a dev dependency only").toBe(false);
    // The install ran with --engine-strict on this Node, the oldest the README names.
    expect(manifest.engines.node).toBe(">=20.19");
    expect(readFileSync(join(REPO, "README.md"), "utf8")).toContain("Node.js 20.19");
    for (const peer of Object.keys(manifest.peerDependencies)) {
      expect(existsSync(join(dir, "node_modules", peer)), `${peer} is an optional peer`).toBe(false);
    }
  });

  it("is imported by plain node, and required: Orchestrator and Worker, and nothing from inside dist/", async () => {
    const imported = `
      import { Orchestrator, Worker } from "cadre";
      const orchestrator = new Orchestrator({ concurrency: 1 });
      await orchestrator.close();
      console.log(typeof Orchestrator, typeof Worker.start);
      await import("cadre/dist/worker/locate-cli.js").catch((error) => console.log(error.code));
    `;
    const required = `
      const { Orchestrator, Worker } = require("cadre");
      console.log(typeof Orchestrator, typeof Worker.start);
    `;
    for (const [type, script, expected] of [
      ["module", imported, ["function function", "ERR_PACKAGE_PATH_NOT_EXPORTED"]],
      ["commonjs", required, ["function function"]],
    ] as const) {
      const result = await execa("node", [`--input-type=${type}`, "-e", script], {
        cwd: installed.dir,
        env: userEnv,
        extendEnv: false,
        reject: false,
      });
      expect(result.stderr, type).toBe("");
      expect(result.stdout.split("\n"), type).toEqual(expected);
    }
  });

  // One test each: tsc checks zod's and the MCP SDK's declarations too, tens of seconds on a loaded
  // machine. TypeScript 7 (the project's) for the resolutions it has; 5 for node10, which 7 removed.
  it.each([
    { tsc: 5, moduleResolution: "node10", module: "commonjs" },
    { tsc: 7, moduleResolution: "node16", module: "node16" },
    { tsc: 7, moduleResolution: "nodenext", module: "nodenext" },
    { tsc: 7, moduleResolution: "bundler", module: "esnext" },
  ] as const)(
    "type-checks a TypeScript $tsc consumer under $moduleResolution resolution, and rejects a wrong option type",
    async ({ tsc, moduleResolution, module }) => {
      const { dir } = installed;
      // No top-level await: the node10 consumer compiles to CommonJS.
      await writeFile(
        join(dir, "good.ts"),
        `import { CadreError, Orchestrator, Worker, type OrchestratorEvent, type TaskResult, type WorkerOptions } from "cadre";
      export async function use(options: WorkerOptions): Promise<void> {
        const orchestrator = new Orchestrator({ concurrency: 2, budgetUsd: 1, retries: 1 });
        orchestrator.on((event: OrchestratorEvent) => event.type === "task_finished" && console.log(event.result.status));
        const result: TaskResult = await orchestrator.run({ name: "t", prompt: "hi" });
        console.log(result.text.length, result.costUsd.toFixed(2));
        const worker = await Worker.start({ ...options, appendSystemPrompt: "Answer tersely." });
        for await (const message of worker.send("hi")) if (message.type === "result") console.log(message.total_cost_usd);
        try {
          await worker.close();
        } catch (error) {
          if (error instanceof CadreError) console.log(error.code.toLowerCase());
        }
      }
      `,
      );
      await writeFile(join(dir, "bad.ts"), `import { Orchestrator } from "cadre";\nnew Orchestrator({ retries: "1" });\n`);
      // esModuleInterop as tsc --init writes it: zod's own CommonJS declarations need it under node10.
      const compilerOptions = { strict: true, esModuleInterop: true, module, moduleResolution, target: "es2022", noEmit: true, types: ["node"] };
      const project = join(dir, `tsconfig.${tsc}-${moduleResolution}.json`);
      await writeFile(project, JSON.stringify({ compilerOptions, files: ["good.ts", "bad.ts"] }));
      const result = await execa("node", [TSC[tsc], "-p", project], { cwd: dir, reject: false });
      expect(result.stdout.trim().split("\n")).toEqual([
        expect.stringMatching(/^bad\.ts\(2,\d+\): error TS2322: Type 'string' is not assignable to type 'number'\.$/),
      ]);
      expect(result.exitCode).not.toBe(0);
    },
    SLOW_TEST_MS,
  );

  it("lists the agents it ships in the consumer's project, marked as shipped", async () => {
    const result = await cadre(["agents"]);
    expect(result.stderr).toBe("");
    const rows = result.stdout.split("\n").map((line) => line.split(/\s{2,}/));
    expect(rows.map((row) => [row[0], row[2]])).toEqual([
      ["NAME", "SOURCE"],
      ...SHIPPED_AGENTS.map((name) => [name, `node_modules/cadre/agents/${name}.md (shipped with cadre)`]),
    ]);
  });

  it("says what to install when claude is not there, or bullmq and ioredis for --redis", async () => {
    const example = join("examples", "code-review.yaml");
    const claude = `npm install @anthropic-ai/claude-code@${manifest.peerDependencies["@anthropic-ai/claude-code"]}`;
    const run = await cadre(["run", example, "--rehearse", "--out", join(installed.dir, "no-claude")]);
    expect([run.exitCode, run.stdout]).toEqual([1, ""]);
    expect(run.stderr).toMatch(new RegExp(`^cadre run: cannot find the claude CLI: install it beside cadre \\(${claude}\\), put claude on PATH`));
    expect(existsSync(join(installed.dir, "no-claude")), "nothing started").toBe(false);

    const redis = `--redis needs bullmq and ioredis, not installed: npm install bullmq@${manifest.peerDependencies.bullmq} ioredis@${manifest.peerDependencies.ioredis}`;
    const url = "redis://127.0.0.1:9";
    const distributed = await cadre(["run", example, "--rehearse", "--redis", url, "--out", join(installed.dir, "no-bullmq")]);
    expect([distributed.exitCode, distributed.stderr]).toEqual([1, `cadre run: ${redis}`]);
    const host = await cadre(["worker", "--redis", url]);
    expect([host.exitCode, host.stderr]).toEqual([1, `cadre worker: ${redis}`]);
  });

  it(
    "runs a copied example with `cadre run <example> --rehearse`, with the claude on PATH",
    async () => {
      const env = { ...userEnv, PATH: [claudeDir, userEnv.PATH].join(delimiter) };
      expect((await cadre(["--version"], env)).stdout).toBe(`cadre ${manifest.version}`);
      const out = join(installed.dir, "run");
      const run = await cadre(["run", join("examples", "code-review.yaml"), "--rehearse", "--out", out], env);
      expect(run.exitCode, run.stderr).toBe(0);
      const summary = SummarySchema.parse(JSON.parse(await readFile(join(out, "summary.json"), "utf8")));
      expect(summary.tasks.map((task) => [task.name, task.status])).toEqual([
        ["review-cache.ts", "succeeded"],
        ["review-retry.ts", "succeeded"],
        ["review-slug.ts", "succeeded"],
        ["summary", "succeeded"],
      ]);
    },
    SLOW_TEST_MS,
  );
});
