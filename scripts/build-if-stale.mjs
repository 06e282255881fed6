// `npm run build` unless nothing it reads changed since the last build: npm's prepare (every `npm install`
// in a clone, and every first `npx cadre` there, which links the clone into npx's cache and prepares it)
// and the tests' global setup. A build whose inputs have not changed is skipped: it saves a minute on a
// loaded machine, and keeps one command from rewriting dist/ under another that runs it.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const REPO = fileURLToPath(new URL("..", import.meta.url));
const INPUTS = ["src", "package.json", "package-lock.json", "tsconfig.json", "tsconfig.build.json", "rolldown.config.ts", "scripts/build-cli.mjs"];
const OUTPUTS = ["dist/index.js", "dist/cli/main.js"];
const STAMP = join(REPO, "node_modules", ".cache", "cadre", "build-inputs");

/** Paths, sizes and modification times of everything the build reads. */
function fingerprint() {
  const hash = createHash("sha256");
  for (const input of INPUTS) {
    const path = join(REPO, input);
    if (!existsSync(path)) continue;
    const files = statSync(path).isDirectory()
      ? readdirSync(path, { recursive: true })
          .map((name) => join(path, name))
          .sort()
      : [path];
    for (const file of files) {
      const { size, mtimeMs } = statSync(file);
      hash.update(`${file}\0${size}\0${mtimeMs}\n`);
    }
  }
  return hash.digest("hex");
}

const inputs = fingerprint();
const built = existsSync(STAMP) ? readFileSync(STAMP, "utf8") : "";
if (built !== inputs || !OUTPUTS.every((output) => existsSync(join(REPO, output)))) {
  execFileSync("npm", ["run", "--silent", "build"], { cwd: REPO, stdio: "inherit" });
  mkdirSync(dirname(STAMP), { recursive: true });
  writeFileSync(STAMP, inputs);
}
