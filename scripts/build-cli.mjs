// `npm run build`'s second step, the command line's bundle (rolldown.config.ts), through rolldown's
// JS API: its CLI prints every chunk's size (about 90 lines on each `npm install` of a clone) and
// ignores logLevel. Warnings and errors still print. The size report: npx rolldown -c rolldown.config.ts
import { readdirSync, rmdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { build } from "rolldown";
import { loadConfig } from "rolldown/config";

const config = await loadConfig("rolldown.config.ts");
for (const options of Array.isArray(config) ? config : [config]) {
  const { output } = await build(options);
  // The chunks are written over the old ones (same names for the same sources), then the files of
  // earlier builds that this one did not write are removed: no moment without a chunk a process needs.
  const dir = options.output.dir;
  const written = new Set(output.flatMap((file) => [file.fileName, ...(file.type === "chunk" && file.map ? [`${file.fileName}.map`] : [])]));
  const page = new Set(readdirSync("src/dashboard/page", { recursive: true }).map((name) => join("page", name)));
  for (const name of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!name.isFile()) continue;
    const file = join(name.parentPath, name.name).slice(dir.length + 1);
    if (!written.has(file) && !page.has(file)) rmSync(join(dir, file));
  }
  // Deepest first, so a folder emptied by the loop above goes too.
  const folders = readdirSync(dir, { recursive: true, withFileTypes: true }).filter((entry) => entry.isDirectory());
  for (const folder of folders
    .map((entry) => join(entry.parentPath, entry.name))
    .sort()
    .reverse()) {
    if (readdirSync(folder).length === 0) rmdirSync(folder);
  }
}
