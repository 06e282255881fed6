// vitest's globalSetup: the tests that start `cadre` run bin/cadre.js, which runs the built
// dist/ as an installed cadre does; building first keeps them from testing stale output.
// A build whose inputs have not changed since the last one is skipped: that saves seconds
// on every run of one test file, and keeps a second run from rewriting dist/ under the first.
import { createHash } from "node:crypto";
import { mkdir, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";

const REPO = fileURLToPath(new URL("../../", import.meta.url));
const INPUTS = ["src", "package.json", "package-lock.json", "tsconfig.json", "tsconfig.build.json", "rolldown.config.ts"];
const STAMP = join(REPO, "node_modules", ".cache", "cadre", "build-inputs");

/** Paths, sizes and modification times of everything the build reads. */
async function fingerprint(): Promise<string> {
  const hash = createHash("sha256");
  for (const input of INPUTS) {
    const path = join(REPO, input);
    const info = await stat(path).catch(() => undefined);
    if (!info) continue;
    const files = info.isDirectory() ? (await readdir(path, { recursive: true })).map((name) => join(path, name)).sort() : [path];
    for (const file of files) {
      const { size, mtimeMs } = await stat(file);
      hash.update(`${file}\0${size}\0${mtimeMs}\n`);
    }
  }
  return hash.digest("hex");
}

/**
 * The e2e and slow tiers each name this globalSetup, and vitest may start one tier's tests while the
 * other's setup still runs: a second build then rewrites dist/ under running tests (seen in CI as a
 * missing chunk). Both setups run in vitest's main process, so they share one build through globalThis.
 */
const shared = globalThis as { cadreBuild?: Promise<void> };

export default function build(): Promise<void> {
  shared.cadreBuild ??= buildIfStale();
  return shared.cadreBuild;
}

async function buildIfStale(): Promise<void> {
  const inputs = await fingerprint();
  const built = await readFile(STAMP, "utf8").catch(() => "");
  const output = await stat(join(REPO, "dist", "cli", "main.js")).catch(() => undefined);
  if (built === inputs && output) return;
  const result = await execa("npm", ["run", "--silent", "build"], { cwd: REPO, reject: false, all: true });
  if (result.exitCode !== 0) throw new Error(`npm run build failed:\n${result.all}`);
  await mkdir(dirname(STAMP), { recursive: true });
  await writeFile(STAMP, inputs);
}
