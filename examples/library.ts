// The first library example of docs/library.md, as the page shows it (test/doc-blocks.test.ts holds them equal),
// type-checked with the sources ("cadre" is src/index.ts in this repository: tsconfig.json's paths, deno.json's imports).
// Run with real Claude (logged in, or ANTHROPIC_API_KEY set): npx tsx examples/library.ts src/worker/*.ts
import { askUserQuestion, Orchestrator, Worker } from "cadre";

// The files to review: those named on the command line, else this project's package.json.
const files = process.argv.length > 2 ? process.argv.slice(2) : ["package.json"];

const cadre = new Orchestrator({ concurrency: 8, budgetUsd: 2, retries: 2 });
cadre.on((event) => event.type === "task_finished" && console.log(event.task.name, event.result.status));
try {
  for await (const result of cadre.map(files.map((file) => ({ name: file, prompt: `Review ${file} in three bullet points.` })))) {
    console.log(result.name, result.status, result.text, result.costUsd);
  }
} finally {
  await cadre.close();
}

// One claude session with the whole control protocol:
const worker = await Worker.start({
  appendSystemPrompt: "Answer tersely.",
  hooks: { PreToolUse: [{ matcher: "Bash", hooks: [() => ({ decision: "block", reason: "no shell today" })] }] },
  canUseTool: (request) =>
    askUserQuestion.matches(request)
      ? askUserQuestion.answer(request, Object.fromEntries(askUserQuestion.questions(request).map((q) => [q.question, "Yes"])))
      : { behavior: "deny", message: "read-only session" },
});
try {
  for await (const message of worker.send(`What does ${files[0]} say?`)) console.log(message.type);
  // run() rejects with a TurnFailedError when the turn ends in error (NOT_LOGGED_IN, API_ERROR, …).
  const { text, costUsd } = await worker.run("And what is it for?");
  console.log(text, costUsd);
} finally {
  await worker.close();
}
