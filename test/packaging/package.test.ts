// cadre as npm ships it: the packed tarball installed into a new project, then used the three
// ways a user would: imported by plain Node, type-checked by a TypeScript project, run as `npx cadre`.
import { existsSync, readFileSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SummarySchema } from "../../src/swarm/record.ts";
import { type InstalledCadre, installPackedCadre, REPO } from "../support/installed-package.ts";

// npm install copies the pinned claude binary (~380 MB); tsc checks dependencies' .d.ts too.
const INSTALL_TIMEOUT_MS = 600_000;
const SLOW_TEST_MS = 180_000;
const { version } = JSON.parse(await readFile(join(REPO, "package.json"), "utf8")) as { version: string };
/** The repository's TypeScript (a dev dependency), standing in for the consumer's. */
const TSC = (() => {
  const manifest = createRequire(import.meta.url).resolve("typescript/package.json");
  const { bin } = JSON.parse(readFileSync(manifest, "utf8")) as { bin: { tsc: string } };
  return join(dirname(manifest), bin.tsc);
})();

/** The consumer's own environment: no loader or TypeScript hook that could hide a missing build. */
function userEnv(): Record<string, string | undefined> {
  const { NODE_OPTIONS: _options, ...env } = process.env;
  return env;
}

let installed: InstalledCadre;
beforeAll(async () => {
  installed = await installPackedCadre(["@types/node"]);
}, INSTALL_TIMEOUT_MS);
afterAll(async () => {
  await installed?.remove();
});

describe("the npm package", () => {
  it("ships compiled JavaScript, and needs no TypeScript tooling at run time", () => {
    const { packageDir, dir } = installed;
    for (const file of ["dist/index.js", "dist/index.d.ts", "dist/index.js.map", "dist/cli/main.js", "bin/cadre.js", "LICENSE", "README.md"]) {
      expect(existsSync(join(packageDir, file)), file).toBe(true);
    }
    expect(existsSync(join(packageDir, "src")), "src/ is not shipped").toBe(false);
    expect(existsSync(join(dir, "node_modules", "tsx")), "tsx is a dev dependency only").toBe(false);
  });

  it("is imported by plain node: Orchestrator and Worker, and nothing from inside dist/", async () => {
    const script = `
      import { Orchestrator, Worker } from "cadre";
      const orchestrator = new Orchestrator({ concurrency: 1 });
      await orchestrator.close();
      console.log(typeof Orchestrator, typeof Worker.start);
      await import("cadre/dist/worker/locate-cli.js").catch((error) => console.log(error.code));
    `;
    const result = await execa("node", ["--input-type=module", "-e", script], {
      cwd: installed.dir,
      env: userEnv(),
      extendEnv: false,
      reject: false,
    });
    expect(result.stderr).toBe("");
    expect(result.stdout.split("\n")).toEqual(["function function", "ERR_PACKAGE_PATH_NOT_EXPORTED"]);
  });

  it(
    "type-checks a TypeScript consumer against the shipped .d.ts, and rejects a wrong option type",
    async () => {
      const { dir } = installed;
      const tsconfig = {
        compilerOptions: { strict: true, module: "nodenext", moduleResolution: "nodenext", target: "es2022", noEmit: true, types: ["node"] },
        files: ["good.ts", "bad.ts"],
      };
      await writeFile(join(dir, "tsconfig.json"), JSON.stringify(tsconfig));
      await writeFile(
        join(dir, "good.ts"),
        `import { CadreError, Orchestrator, Worker, type OrchestratorEvent, type TaskResult } from "cadre";
      const orchestrator = new Orchestrator({ concurrency: 2, budgetUsd: 1, retries: 1 });
      orchestrator.on((event: OrchestratorEvent) => event.type === "task_finished" && console.log(event.result.status));
      const result: TaskResult = await orchestrator.run({ name: "t", prompt: "hi" });
      console.log(result.text.length, result.costUsd.toFixed(2));
      const worker = await Worker.start({ appendSystemPrompt: "Answer tersely." });
      for await (const message of worker.send("hi")) if (message.type === "result") console.log(message.total_cost_usd);
      try {
        await worker.close();
      } catch (error) {
        if (error instanceof CadreError) console.log(error.code.toLowerCase());
      }
      `,
      );
      await writeFile(join(dir, "bad.ts"), `import { Orchestrator } from "cadre";\nnew Orchestrator({ concurrency: "8" });\n`);
      const result = await execa("node", [TSC, "-p", dir], { cwd: dir, reject: false });
      expect(result.stdout.trim().split("\n")).toEqual([
        expect.stringMatching(/^bad\.ts\(2,\d+\): error TS2322: Type 'string' is not assignable to type 'number'\.$/),
      ]);
      expect(result.exitCode).not.toBe(0);
    },
    SLOW_TEST_MS,
  );

  it(
    "runs `npx cadre run <example> --rehearse` from the installed package",
    async () => {
      const { dir, packageDir } = installed;
      const npx = (args: string[]) => execa("npx", ["--no-install", "cadre", ...args], { cwd: dir, env: userEnv(), extendEnv: false, reject: false });
      expect((await npx(["--version"])).stdout).toBe(`cadre ${version}`);
      const out = join(dir, "run");
      const run = await npx(["run", join(packageDir, "examples", "code-review.yaml"), "--rehearse", "--out", out]);
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
