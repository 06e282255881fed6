// Every example runs end to end offline, the way the README tells a newcomer to run it:
// `cadre run examples/<x>.yaml --rehearse`, real claude workers against the scripted model.
import { existsSync } from "node:fs";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execa } from "execa";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import type { CliMessage } from "../src/protocol/index.ts";
import { cadre, decodeTranscript, readSummary, repo } from "./support/cli.ts";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cadre-examples-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/**
 * Runs one example with --rehearse into a fresh directory; checks what every run must have.
 * When the test ends, a run still going (a timeout) is stopped, then `cleanup` runs.
 */
async function rehearse(example: string, cleanup?: () => Promise<void>) {
  const out = join(dir, example);
  const child = cadre(["run", `examples/${example}.yaml`, "--rehearse", "--out", out]);
  onTestFinished(async () => {
    // SIGTERM, not SIGKILL: cadre stops gracefully and removes what it made (worktrees included).
    if (child.exitCode === null) child.kill("SIGTERM");
    await child;
    await cleanup?.();
  });
  const run = await child;
  const summary = await readSummary(out);
  const transcripts = new Map<string, CliMessage[]>();
  // A for_each over a result has no session of its own: its copies have theirs.
  for (const entry of [...summary.tasks.filter((task) => task.copies === undefined), ...summary.sessions]) {
    // A task skipped (its condition false) never had a worker.
    if (entry.status === "skipped") {
      expect(entry.transcript, entry.name).toBeNull();
      continue;
    }
    expect(entry.transcript, entry.name).not.toBeNull();
    transcripts.set(entry.name, await decodeTranscript(join(out, entry.transcript!)));
  }
  // Each transcript is a whole session: it starts with init and ends with a result (for a task, the one the summary reports).
  for (const [name, messages] of transcripts) {
    expect(messages.find((m) => m.type === "system")).toMatchObject({ subtype: "init" });
    const task = summary.tasks.find((t) => t.name === name);
    expect(messages.at(-1), name).toMatchObject({ type: "result", is_error: false, ...(task && { result: task.text }) });
  }
  expect(summary.rehearsal).toBe(true);
  expect(summary.cost_simulated).toBe(true);
  // The totals are the sum of what is listed: tasks and sessions.
  const listed = [...summary.tasks, ...summary.sessions];
  expect(summary.totals.cost_usd).toBeGreaterThan(0);
  expect(summary.totals.cost_usd).toBeCloseTo(
    listed.reduce((sum, entry) => sum + entry.cost_usd, 0),
    10,
  );
  expect(summary.totals.num_turns).toBe(listed.reduce((sum, entry) => sum + entry.num_turns, 0));
  expect(summary.totals.usage.input_tokens).toBeGreaterThan(0);
  return { run, summary, transcripts, out };
}

function toolResults(messages: CliMessage[]): { content: unknown; is_error?: boolean }[] {
  return messages.flatMap((m) =>
    m.type === "user" && Array.isArray(m.message.content) ? m.message.content.filter((b) => b.type === "tool_result") : [],
  ) as { content: unknown; is_error?: boolean }[];
}

describe("examples with --rehearse", () => {
  it("code-review: three reviews in parallel, then a summary that received all three", async () => {
    const { run, summary, transcripts } = await rehearse("code-review");
    expect(run.exitCode, run.stderr).toBe(0);
    expect(summary.tasks.map((t) => [t.name, t.status])).toEqual([
      ["review-cache.ts", "succeeded"],
      ["review-retry.ts", "succeeded"],
      ["review-slug.ts", "succeeded"],
      ["summary", "succeeded"],
    ]);
    expect(summary.totals).toMatchObject({ tasks: 4, succeeded: 4, failed: 0, num_turns: 7 });
    expect(summary.tasks[0]?.text).toBe("- line 10: get() returns expired entries and never deletes them, so the map grows without bound.");
    expect(summary.tasks[3]?.depends_on).toEqual(["review-cache.ts", "review-retry.ts", "review-slug.ts"]);
    // {{results.review-…}} was filled with each review's final text before the summary started.
    for (const review of summary.tasks.slice(0, 3)) expect(summary.tasks[3]?.text).toContain(review.text);
    // Each reviewer really read its file.
    expect(JSON.stringify(toolResults(transcripts.get("review-retry.ts")!))).toContain("export async function fetchWithRetry");
    expect(summary.sessions).toEqual([]);
    // The three reviewers share a prefix: the rehearsal's prompt cache shows the reads, and what they saved.
    expect(summary.totals.usage.cache_read_input_tokens).toBeGreaterThan(0);
    expect(summary.totals.cache_saved_usd).toBeGreaterThan(0);
    expect(run.stdout).toMatch(
      /^total {2}4\/4 succeeded, 7 turns, ~\$\d+\.\d+ \(simulated\), \d+% of input from cache \(saved ~\$\d+\.\d+\), [\d.]+m?s$/m,
    );
  });

  it("research-critic: the researcher asks the critic through ask_peer and uses its answer", async () => {
    const { run, summary } = await rehearse("research-critic");
    expect(run.exitCode, run.stderr).toBe(0);
    expect(summary.tasks.map((t) => [t.name, t.status])).toEqual([
      ["research", "succeeded"],
      ["brief", "succeeded"],
    ]);
    const critique = "Retrying non-idempotent POSTs can double-charge a customer, and retries without back-off amplify an outage.";
    expect(summary.tasks[0]?.text).toContain(JSON.stringify({ peer: "critic", answer: critique }));
    expect(summary.tasks[1]?.text).toContain(critique);
    // The critic's session works for the run: its own entry, cost and transcript, started by the research task.
    expect(summary.sessions).toEqual([expect.objectContaining({ role: "peer", name: "peer:critic", agent: "critic", parent: "research" })]);
    expect(summary.sessions[0]?.cost_usd).toBeGreaterThan(0);
  });

  it("plan-map-reduce: the planner's three files make three fixers, each with its file; the reducer reads all three", async () => {
    const { run, summary } = await rehearse("plan-map-reduce");
    expect(run.exitCode, run.stderr).toBe(0);
    expect(summary.tasks.map((t) => [t.name, t.status, t.copy_of ?? null])).toEqual([
      ["plan", "succeeded", null],
      ["fix", "succeeded", null],
      ["fix-0", "succeeded", "fix"],
      ["fix-1", "succeeded", "fix"],
      ["fix-2", "succeeded", "fix"],
      ["merge", "succeeded", null],
    ]);
    const files = (summary.tasks[0]!.structured_output as { files: { path: string }[] }).files;
    expect(summary.tasks.find((t) => t.name === "fix")?.copies).toEqual(["fix-0", "fix-1", "fix-2"]);
    for (const [k, file] of files.entries()) {
      const copy = summary.tasks.find((t) => t.name === `fix-${k}`)!;
      expect(copy).toMatchObject({ item: file, index: k });
      expect(copy.text).toContain(`Fix ${file.path} (file ${k} of the plan)`);
      // The reducer read every copy at once.
      expect(summary.tasks.at(-1)?.text).toContain(JSON.stringify(copy.text));
    }
    expect(summary.totals.num_turns).toBe(6);
  });

  it("write-review-loop: two rounds until the reviewer approves, the writer in one session; every round recorded", async () => {
    const { run, summary } = await rehearse("write-review-loop");
    expect(run.exitCode, run.stderr).toBe(0);
    expect(summary.tasks.map((t) => [t.name, t.status, t.round ?? null])).toEqual([
      ["write", "succeeded", null],
      ["write#1", "succeeded", 1],
      ["write#2", "succeeded", 2],
      ["review", "succeeded", null],
      ["review#1", "succeeded", 1],
      ["review#2", "succeeded", 2],
      ["publish", "succeeded", null],
    ]);
    expect(summary.loops).toEqual([
      {
        name: "draft",
        tasks: ["write", "review"],
        until: "results.review.structured.approved",
        max_rounds: 5,
        status: "succeeded",
        rounds: 2,
        error: null,
      },
    ]);
    const task = (name: string) => summary.tasks.find((t) => t.name === name)!;
    // The writer continued its session; the reviewer (fresh) started a new one each round.
    expect(task("write#2").session_id).toBe(task("write#1").session_id);
    expect(task("review#2").session_id).not.toBe(task("review#1").session_id);
    expect(task("review").structured_output).toEqual({ approved: true, notes: "Accurate and short." });
    expect(task("publish").text).toContain(task("write#2").text);
    for (const round of ["write#1", "write#2", "review#1", "review#2"]) expect(task(round).cost_usd).toBeGreaterThan(0);
    expect(task("write")).toMatchObject({ rounds: 2, cost_usd: 0, text: task("write#2").text });
  });

  it("guarded-shell: the policy denies rm -rf, a harmless command runs", async () => {
    const { run, summary, transcripts } = await rehearse("guarded-shell");
    expect(run.exitCode, run.stderr).toBe(0);
    expect(summary.tasks.map((t) => [t.name, t.status])).toEqual([["tidy", "succeeded"]]);
    expect(summary.tasks[0]?.text).toMatch(
      /^The hook refused to run rm -rf, so nothing was deleted\. The sample code directory holds: cache\.ts\s+retry\.ts\s+slug\.ts$/,
    );
    const [denied, listed] = toolResults(transcripts.get("tidy")!);
    expect(denied?.is_error).toBe(true);
    expect(JSON.stringify(denied?.content)).toContain("cadre policy denies this Bash command");
    expect(listed?.is_error).toBeFalsy();
    expect(run.stdout).toContain("tidy: tool error: PreToolUse:Bash hook error: cadre policy denies this Bash command");
    // Rehearsals leave the examples directory as it was.
    expect((await readdir(join(repo, "examples"))).sort()).toEqual([
      "code",
      "code-review.yaml",
      "guarded-shell.yaml",
      "library.ts",
      "plan-map-reduce.yaml",
      "posted-tasks.yaml",
      "replays",
      "research-critic.yaml",
      "run-swarm-file.ts",
      "triage-route.yaml",
      "workflows",
      "worktrees.yaml",
      "write-review-loop.yaml",
    ]);
    expect(existsSync(join(repo, "examples", "build"))).toBe(false);
  });

  it("posted-tasks: the lead posts four tasks; three run as tasks of the run naming it, the fourth is refused as a tool error it reads", async () => {
    const { run, summary, transcripts } = await rehearse("posted-tasks");
    expect(run.exitCode, run.stderr).toBe(0);
    expect(summary.tasks.map((t) => [t.name, t.status, t.posted_by ?? null])).toEqual([
      ["lead", "succeeded", null],
      ["fix-cache", "succeeded", "lead"],
      ["fix-retry", "succeeded", "lead"],
      ["fix-slug", "succeeded", "lead"],
    ]);
    const refused = toolResults(transcripts.get("lead")!).filter((result) => result.is_error === true);
    expect(refused).toHaveLength(1);
    expect(JSON.stringify(refused[0]?.content)).toContain("max_posted_tasks (3)");
    // The lead waited for the three and read their answers.
    expect(summary.tasks[0]?.text).toContain("evict by size");
    expect(summary.tasks[0]?.text).toContain("hash for punctuation-only titles");
    expect(run.stdout).toContain("lead: tool error: refused: the run's max_posted_tasks (3) is reached");
  });

  it("triage-route: the triager's verdict (bug) runs the fixer, skips the answerer with the reason, and the wrap-up follows", async () => {
    const { run, summary } = await rehearse("triage-route");
    expect(run.exitCode, run.stderr).toBe(0);
    expect(summary.tasks.map((t) => [t.name, t.status])).toEqual([
      ["triage", "succeeded"],
      ["fixer", "succeeded"],
      ["answerer", "skipped"],
      ["wrap-up", "succeeded"],
    ]);
    expect(summary.tasks[0]?.structured_output).toEqual({ kind: "bug", about: "slugify() returns an empty slug for punctuation-only titles" });
    expect(summary.tasks[1]?.text).toContain("Fall back to a short hash");
    expect(summary.tasks[2]).toMatchObject({
      when: 'results.triage.structured.kind == "question"',
      error: { code: "CONDITION_FALSE", message: 'when: results.triage.structured.kind == "question" was false' },
      num_turns: 0,
      session_id: null,
    });
    // The wrap-up got the fixer's answer, and nothing of the skipped answerer.
    expect(summary.tasks[3]?.text).toContain(`from this: ${summary.tasks[1]?.text}`);
    expect(summary.tasks[3]?.text).not.toContain("never played");
    expect(summary.totals).toMatchObject({ tasks: 4, succeeded: 3, skipped: 1, failed: 0 });
    expect(run.stdout).toContain('answerer: skipped: when: results.triage.structured.kind == "question" was false');
  });

  it("worktrees: two agents edit the same file on two branches; a third task starts from one of them; the checkout stays as it was", async () => {
    const git = async (args: string[]) => (await execa("git", args, { cwd: repo })).stdout.trim();
    const cadreBranches = async () => (await git(["branch", "--list", "cadre/*", "--format=%(refname:short)"])).split("\n").filter(Boolean);
    const before = { head: await git(["rev-parse", "HEAD"]), status: await git(["status", "--porcelain"]), branches: await cadreBranches() };
    // The run leaves branches in this repository: remove the ones it made, whatever happens to the test.
    const { run, summary } = await rehearse("worktrees", async () => {
      const made = (await cadreBranches()).filter((branch) => !before.branches.includes(branch));
      if (made.length > 0) await git(["branch", "-D", ...made]);
    });
    const branches = summary.tasks.flatMap((t) => (t.branch ? [t.branch] : []));
    expect(run.exitCode, run.stderr).toBe(0);
    expect(summary.tasks.map((t) => [t.name, t.status, t.branch])).toEqual([
      ["harden", "succeeded", `cadre/${summary.run_id}/harden`],
      ["document", "succeeded", `cadre/${summary.run_id}/document`],
      // It read the hardener's version and changed nothing: no branch.
      ["review", "succeeded", null],
    ]);
    const file = (branch: string) => git(["show", `${branch}:examples/code/slug.ts`]);
    const [hardened, documented] = await Promise.all(branches.map(file));
    expect(hardened).toContain('if (typeof title !== "string") return "";');
    expect(hardened).not.toContain("/** slug(");
    expect(documented).toContain('/** slug("Hello, World!") === "hello-world" */');
    expect(documented).not.toContain("typeof title");
    expect(summary.tasks[2]?.base).toBe(summary.tasks[0]?.commit);
    expect(summary.tasks[2]?.text).toContain('if (typeof title !== "string") return "";');
    expect({ head: await git(["rev-parse", "HEAD"]), status: await git(["status", "--porcelain"]) }).toEqual({
      head: before.head,
      status: before.status,
    });
  }, 180_000);
});
