// The library examples of docs/library.md, type-checked with the rest of the sources ("cadre" is
// src/index.ts in this repository: tsconfig.json's paths, deno.json's imports).
// Run with real Claude (logged in, or ANTHROPIC_API_KEY set): npx tsx examples/library.ts src/worker/*.ts
import { askUserQuestion, Orchestrator, Worker } from "cadre";

const files = process.argv.slice(2);

const cadre = new Orchestrator({ concurrency: 8, budgetUsd: 2, retries: 2 });
cadre.on((event) => event.type === "task_finished" && console.log(event.task.name, event.result.status));
try {
  for await (const result of cadre.map(files.map((file) => ({ name: file, prompt: `Review ${file} in three bullet points.` })))) {
    console.log(result.name, result.text, result.costUsd);
  }
} finally {
  await cadre.close();
}

const worker = await Worker.start({
  appendSystemPrompt: "Answer tersely.",
  hooks: { PreToolUse: [{ matcher: "Bash", hooks: [() => ({ decision: "block", reason: "no shell today" })] }] },
  canUseTool: (request) =>
    askUserQuestion.matches(request)
      ? askUserQuestion.answer(request, { [askUserQuestion.questions(request)[0]!.question]: "Yes" })
      : { behavior: "deny", message: "read-only session" },
});
try {
  for await (const message of worker.send(`What does ${files[0] ?? "package.json"} export?`)) console.log(message.type);
  const { text, costUsd } = await worker.run("And what imports it?");
  console.log(text, costUsd);
} finally {
  await worker.close();
}
