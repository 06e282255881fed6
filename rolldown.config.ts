// The `cadre` command as Node runs it: src/cli/main.ts bundled with its dependencies
// into dist/cli/, one chunk per command (main.ts imports each command lazily).
// Node 20 has no compile cache for ES modules, and resolving, reading and compiling
// the ~600 files of zod, ajv, execa, yaml and the MCP SDK one by one took longer than
// the command itself; a few large files load about twice as fast. The library (dist/index.js)
// is tsc's file-per-module output with its dependencies left to the user's install.
import { copyFileSync, mkdirSync, readdirSync, renameSync } from "node:fs";
import { dirname, join } from "node:path";
import { defineConfig } from "rolldown";

export default defineConfig({
  input: { main: "src/cli/main.ts" },
  platform: "node",
  // Resolved at run time, not bundled: claude-code's native binary is what cadre starts; BullMQ and
  // ioredis (only `cadre worker` and `run --redis` load them) reach optional drivers and native
  // parts of msgpackr through run-time requires that a bundle would cut. QuickJS (workflow scripts' sandbox)
  // loads its WebAssembly file from beside its own module, which a bundle would move away from it.
  external: [/^@anthropic-ai\/claude-code/, /^bullmq/, /^ioredis/, /^quickjs-emscripten/, /^@jitl\/quickjs-/],
  tsconfig: "tsconfig.json",
  plugins: [
    {
      // The workflow sandbox's thread is a module of its own (src/workflow/sandbox-thread.ts), which Node starts by
      // its URL: emitted as a chunk, with the expression that finds it beside its source swapped for that chunk's URL.
      name: "sandbox-thread",
      transform(code, id) {
        if (!id.endsWith("src/workflow/sandbox-threads.ts")) return null;
        const found = /new URL\(import\.meta\.url\.endsWith\("\.ts"\) \? "\.\/sandbox-thread\.ts" : "\.\/sandbox-thread\.js", import\.meta\.url\)/;
        if (!found.test(code)) throw new Error("rolldown.config.ts: sandbox-threads.ts no longer names its thread's module as this plugin expects");
        const chunk = this.emitFile({ type: "chunk", id: "src/workflow/sandbox-thread.ts", name: "sandbox-thread" });
        // One expression swapped for another on its line: the lines, and so the source map, stay as they were.
        return { code: code.replace(found, `new URL(import.meta.ROLLUP_FILE_URL_${chunk})`), map: null };
      },
    },
    {
      // The dashboard's page is served as plain files, not bundled: copied beside the bundle, where
      // src/dashboard/assets.ts finds it in the package (src/ is not shipped).
      name: "dashboard-page",
      // Each file is copied beside its place and renamed over it: a dashboard serving the old page
      // meanwhile never finds a file missing or half written.
      writeBundle() {
        for (const name of readdirSync("src/dashboard/page", { recursive: true, withFileTypes: true })) {
          if (!name.isFile()) continue;
          const to = join("dist/cli/page", join(name.parentPath, name.name).slice("src/dashboard/page/".length));
          mkdirSync(dirname(to), { recursive: true });
          copyFileSync(join(name.parentPath, name.name), `${to}.part`);
          renameSync(`${to}.part`, to);
        }
      },
    },
  ],
  output: {
    dir: "dist/cli",
    format: "esm",
    // Maps name the original file and line (`node --enable-source-maps` in a clone); without the
    // sources of every bundled dependency inlined they are a fifth of the size. The package
    // ships none (package.json's files): they would point at sources it does not carry.
    sourcemap: true,
    sourcemapExcludeSources: true,
    entryFileNames: "[name].js",
    chunkFileNames: "chunks/[name]-[hash].js",
    // Not emptied first: a running cadre loads its commands' chunks lazily, and a rebuild (a test run
    // beside an edit, `npm run build` in another terminal) would leave it a moment with no chunks at all.
    // scripts/build-cli.mjs removes what the new build no longer writes instead.
  },
});
