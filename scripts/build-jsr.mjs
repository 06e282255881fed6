// The library as JSR ships it (deno.json's export "."): tsc's output (dist/, `npm run build`) with
// one declaration file for the whole public API. JSR wants an explicit type on every exported
// symbol; cadre's protocol and swarm types are inferred from zod schemas, their one source, so
// the sources would need `--allow-slow-types`. Declarations spell those types out. They come as
// one file (dts-bundle-generator, on TypeScript 5's compiler API, which TypeScript 7 does not
// have): Deno's publish check loses names that tsc's per-module .d.ts files import from each
// other. The entry module names it with a `@ts-self-types` pragma; the other modules are plain
// JavaScript that Deno runs without checking. The output sits one level below the root, as dist/
// does, so `../../package.json` still reaches the manifest. The command line (`./cli`) stays
// source: it exports nothing, so JSR checks no types of it.
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const from = "dist";
const to = "dist-jsr";
if (!existsSync(join(from, "index.js"))) {
  console.error("build-jsr: dist/index.js is missing; run `npm run build` first.");
  process.exit(1);
}

rmSync(to, { recursive: true, force: true });
cpSync(from, to, {
  recursive: true,
  // Leaves out the command line's bundle, the source maps (they describe sources this package
  // does not carry as such) and tsc's per-module declarations (replaced by the bundle below).
  filter: (path) => path !== join(from, "cli") && !path.endsWith(".map") && !path.endsWith(".d.ts"),
});

const generator = join("node_modules", "dts-bundle-generator", "dist", "bin", "dts-bundle-generator.js");
execFileSync(
  process.execPath,
  [generator, "--silent", "--no-banner", "--project", "tsconfig.build.json", "--no-check", "-o", join(to, "index.d.ts"), "src/index.ts"],
  { stdio: "inherit" },
);

for (const file of readdirSync(to, { recursive: true })) {
  if (!file.endsWith(".js")) continue;
  const path = join(to, file);
  const code = readFileSync(path, "utf8").replace(/\n\/\/# sourceMappingURL=\S+\n?$/, "\n");
  writeFileSync(path, file === "index.js" ? `/* @ts-self-types="./index.d.ts" */\n${code}` : code);
}
console.log(`build-jsr: ${to}/index.js with one declaration file for its public API`);
