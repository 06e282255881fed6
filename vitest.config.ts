import { configDefaults, defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";
import { FAST, SLOW } from "./test/tiers.ts";

/** The tests that start `cadre` run the built dist/: those tiers rebuild it first when its inputs changed. */
const BUILD = ["test/support/build.ts"];

/**
 * The slow tier's files start first. vitest queues projects by name, so they started last
 * and were the whole run's tail: minutes each, with the other workers idle.
 */
class SlowTierFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (spec: TestSpecification) => (spec.project.name === "slow" ? 0 : 1);
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    // Tests that start real claude processes take seconds each; they run in
    // parallel files, each with its own HOME and rehearsal server port.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    maxWorkers: 4,
    sequence: { sequencer: SlowTierFirst },
    // Three tiers (test/tiers.ts): `npm test` runs them all, `npm run test:fast` only the first.
    projects: [
      { extends: true, test: { name: "fast", include: FAST, setupFiles: ["test/support/no-processes.ts"], pool: "threads", isolate: false } },
      {
        extends: true,
        test: { name: "e2e", include: ["test/**/*.test.ts"], exclude: [...configDefaults.exclude, ...FAST, ...SLOW], globalSetup: BUILD },
      },
      { extends: true, test: { name: "slow", include: SLOW, globalSetup: BUILD } },
    ],
  },
});
