#!/usr/bin/env node
// Node's entry point: the built command line in dist/cli/ (`npm run build`, run by
// `npm install` in a clone). Node 22+ keeps compiled code between runs when asked
// before the modules load; Node 20 lacks the call and starts without it.
import module from "node:module";
import v8 from "node:v8";

module.enableCompileCache?.();
// Workflow scripts run in QuickJS compiled to WebAssembly. V8's optimizing tier costs
// QuickJS more than it gives (its interpreter loop is one huge function, compiled anew
// on every run, and exit waits for that compile): measured on Node 20, a script with no
// agent 0.41 -> 0.30 CPU-s, one computing for seconds 4.4 -> 2.7 s (docs/performance.md).
// Set before any WebAssembly is compiled; cadre's only WebAssembly is QuickJS.
v8.setFlagsFromString("--liftoff-only");
let cli;
try {
  cli = await import("../dist/cli/main.js");
} catch (error) {
  if (error?.code !== "ERR_MODULE_NOT_FOUND" || !String(error.message).includes("dist/cli/main.js")) throw error;
  process.stderr.write("cadre: dist/ is missing; run `npm run build` in the cadre directory\n");
  process.exit(2);
}
process.exitCode = await cli.main(process.argv.slice(2));
