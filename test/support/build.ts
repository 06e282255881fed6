// vitest's globalSetup: the tests that start `cadre` run bin/cadre.js, which runs the built
// dist/ as an installed cadre does; building first keeps them from testing stale output.
import { execa } from "execa";

export default async function build(): Promise<void> {
  const repo = new URL("../../", import.meta.url);
  const result = await execa("npm", ["run", "--silent", "build"], { cwd: repo, reject: false, all: true });
  if (result.exitCode !== 0) throw new Error(`npm run build failed:\n${result.all}`);
}
