// vitest's globalSetup (the e2e and slow tiers): the tests that start `cadre` run bin/cadre.js, which runs
// the built dist/ as an installed cadre does; building first keeps them from testing stale output.
import { execa } from "execa";

const REPO = new URL("../../", import.meta.url);

export default async function build(): Promise<void> {
  const result = await execa("node", ["scripts/build-if-stale.mjs"], { cwd: REPO, reject: false, all: true });
  if (result.exitCode !== 0) throw new Error(`npm run build failed:\n${result.all}`);
}
