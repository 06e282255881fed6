#!/usr/bin/env node
// Runs the TypeScript sources directly through tsx, so `npx cadre` works right
// after `npm install` with no build step to remember.
import { register } from "tsx/esm/api";

register();
const { main } = await import("../src/cli/main.ts");
process.exitCode = await main(process.argv.slice(2));
