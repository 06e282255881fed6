// `npm run build`'s second step, the command line's bundle (rolldown.config.ts), through rolldown's
// JS API: its CLI prints every chunk's size (about 90 lines on each `npm install` of a clone) and
// ignores logLevel. Warnings and errors still print. The size report: npx rolldown -c rolldown.config.ts
import { build } from "rolldown";
import { loadConfig } from "rolldown/config";

const config = await loadConfig("rolldown.config.ts");
for (const options of Array.isArray(config) ? config : [config]) await build(options);
