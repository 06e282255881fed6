// The Deno entry point (`deno task run|mcp`, and `jsr:@cadre/cadre/cli` from JSR): Deno runs
// the TypeScript sources as they are, so this only hands the arguments to the same main()
// that Node runs built, through bin/cadre.js.
import process from "node:process";
import { main } from "../src/cli/main.ts";

process.exitCode = await main(process.argv.slice(2));
