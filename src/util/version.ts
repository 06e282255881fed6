// A JSON import, not a read relative to this file: the CLI bundle inlines it, so the
// version is right wherever the built file sits, and Deno reads it with the sources.
import manifest from "../../package.json" with { type: "json" };

/** cadre's version, from its package.json. */
export const CADRE_VERSION: string = manifest.version;
