#!/usr/bin/env node
// Node's entry point: the built command line in dist/cli/ (`npm run build`, run by
// `npm install` in a clone). Node 22+ keeps compiled code between runs when asked
// before the modules load; Node 20 lacks the call and starts without it.
import module from "node:module";

module.enableCompileCache?.();
let cli;
try {
  cli = await import("../dist/cli/main.js");
} catch (error) {
  if (error?.code !== "ERR_MODULE_NOT_FOUND" || !String(error.message).includes("dist/cli/main.js")) throw error;
  process.stderr.write("cadre: dist/ is missing; run `npm run build` in the cadre directory\n");
  process.exit(2);
}
process.exitCode = await cli.main(process.argv.slice(2));
