// The JSR package's library entry as a Deno user receives it: built JavaScript typed by one
// declaration file (scripts/build-jsr.mjs). `deno task publish:check` type-checks and runs this
// against that build, so a declaration the bundle lost or a module it left out fails there.
import { CadreError, type CliMessage, loadSwarmConfigOrThrow, Orchestrator } from "../../dist-jsr/index.js";

const resultText = (message: CliMessage): string | undefined => (message.type === "result" ? message.result : undefined);

const config = await loadSwarmConfigOrThrow(new URL("../../examples/code-review.yaml", import.meta.url).pathname);
let refused: string | undefined;
try {
  new Orchestrator({ concurrency: 0 });
} catch (error) {
  if (error instanceof CadreError) refused = error.code;
}
if (config.tasks.length === 0 || refused === undefined) throw new Error(`the JSR entry misbehaves: ${config.tasks.length} tasks, ${refused}`);
console.log(
  `jsr entry: ${config.tasks.length} tasks read, an invalid option refused with ${refused}, ${resultText({ type: "result", subtype: "success", result: "ok" } as CliMessage)}`,
);
