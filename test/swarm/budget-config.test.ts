// Budgets in a swarm file: where they may be written, what cannot be met, and what the orchestrator and its tasks are given.
import { describe, expect, it } from "vitest";
import { orchestratorOptionsFor, taskSpecFor } from "../../src/swarm/config/index.ts";
import { parseSwarmConfig } from "../../src/swarm/config/load.ts";
import { FIXTURE_CONFIGS } from "../support/swarm.ts";

const parse = (lines: string[]) => parseSwarmConfig(lines.join("\n"), { baseDir: FIXTURE_CONFIGS, format: "yaml", env: {} });

describe("budgets in the swarm file", () => {
  it("takes budget_usd on the run, an agent and a task, and budget_forecast", async () => {
    const result = await parse([
      "budget_usd: 5",
      "budget_forecast: false",
      "agents:",
      "  reviewer: { description: d, prompt: p, budget_usd: 2 }",
      "tasks:",
      "  - { name: review, agent: reviewer, prompt: p, budget_usd: 0.5 }",
      "  - { name: plain, prompt: p }",
    ]);
    if (!result.ok) throw new Error(JSON.stringify(result.errors));
    const options = orchestratorOptionsFor(result.config);
    expect(options).toMatchObject({ budgetUsd: 5, budgetForecast: false, agents: { reviewer: { budgetUsd: 2 } } });
    const [review, plain] = result.config.tasks;
    expect(taskSpecFor(review!, "p", new AbortController().signal)).toMatchObject({ budgetUsd: 0.5, budgetName: "review" });
    expect(taskSpecFor(plain!, "p", new AbortController().signal).budgetUsd).toBeUndefined();
  });

  it("a budget that cannot be met is a config error at its path", async () => {
    const result = await parse([
      "budget_usd: 1",
      "agents:",
      "  reviewer: { description: d, prompt: p, budget_usd: 2 }",
      "  fixer: { description: d, prompt: p, budget_usd: -1 }",
      "tasks:",
      "  - { name: review, agent: reviewer, prompt: p, budget_usd: 3 }",
      "  - { name: plain, prompt: p, budget_usd: 1.5 }",
      "  - { name: negative, prompt: p, budget_usd: -0.5 }",
    ]);
    expect(result.ok).toBe(false);
    const errors = result.ok ? [] : result.errors;
    expect(errors).toEqual(
      expect.arrayContaining([
        { path: "agents.fixer.budget_usd", message: "must be greater than 0" },
        { path: "tasks[2].budget_usd", message: "must be greater than 0" },
      ]),
    );
    // Past the schema, the limits against each other (checked once the file is otherwise valid).
    const valid = await parse([
      "budget_usd: 1",
      "agents:",
      "  reviewer: { description: d, prompt: p, budget_usd: 2 }",
      "tasks:",
      "  - { name: review, agent: reviewer, prompt: p, budget_usd: 3 }",
      "  - { name: plain, prompt: p, budget_usd: 1.5 }",
    ]);
    expect(valid.ok ? [] : valid.errors).toEqual([
      expect.objectContaining({ path: "tasks[0].budget_usd", message: expect.stringContaining('more than its agent "reviewer" may spend ($2)') }),
      expect.objectContaining({ path: "tasks[1].budget_usd", message: expect.stringContaining("more than the whole run may spend ($1)") }),
    ]);
  });
});
