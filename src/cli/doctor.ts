// `cadre doctor`: checks what a first run needs (Node, claude, a login, the API, git, Redis), one line each.
import process from "node:process";
import { redisUrlProblem } from "../distributed/index.ts";
import { apiCheck, type Check, claudeCheck, gitCheck, loginCheck, redisCheck, runtimeCheck } from "./doctor/checks.ts";
import { parseFlags, UsageError } from "./flags.ts";
import { colorsFor } from "./run/view/format.ts";

const USAGE = "usage: cadre doctor [--offline] [--redis URL]";

const HELP = `${USAGE}

Checks what a first run needs, one line each: Node.js, the claude CLI cadre runs
(and its version against the one cadre is tested with), a login or ANTHROPIC_API_KEY
(as claude auth status sees it), the API answering (ANTHROPIC_BASE_URL, or Anthropic's),
git (for worktree tasks) and, when given, the Redis of distributed runs. A line
marked ✗ says what to fix; ! is a note that does not stop a run.

Only the API check needs the network (and --redis, that Redis); the others look at
this machine. Offline, --offline checks what a rehearsal (cadre run --rehearse) needs:
it skips the API, and a missing login is a note, since a rehearsal needs none.

Options:
  --offline    check everything but the network: skip the API check; no login is a note
  --redis URL  also check this Redis (redis://host:port), as cadre run --redis uses it
  -h, --help   show this help

Exit status: 0 nothing to fix, 1 something to fix (the lines marked ✗), 2 the arguments are wrong.
`;

/** `cadre doctor`: every check at once (the slow ones are network and process starts), printed in a fixed order. */
export async function doctorCommand(args: string[]): Promise<number> {
  let redis: string | undefined;
  let offline = false;
  try {
    const { values } = parseFlags(args, {
      options: { redis: { type: "string" }, offline: { type: "boolean" }, help: { type: "boolean", short: "h" } },
      allowPositionals: false,
    });
    if (values.help) {
      process.stdout.write(HELP);
      return 0;
    }
    redis = values.redis;
    offline = values.offline === true;
    const problem = redis === undefined ? undefined : redisUrlProblem(redis);
    if (problem) throw new UsageError(`--redis: ${problem}`);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`cadre doctor: ${error.message}; ${USAGE}\n`);
    return 2;
  }

  const claude = claudeCheck();
  const login = claude.then(({ path }) => loginCheck(path));
  const checks: Check[] = await Promise.all([
    runtimeCheck(),
    claude.then(({ check }) => check),
    login.then(({ check }) => (offline && check.status === "fail" ? { ...check, status: "note" as const } : check)),
    offline
      ? { name: "API", status: "note" as const, detail: "not checked (--offline): it needs the network" }
      : login.then(({ status }) => apiCheck(status)),
    gitCheck(),
    ...(redis === undefined ? [] : [redisCheck(redis)]),
  ]);

  const c = colorsFor(process.stdout);
  const mark = { ok: c.green("✓"), note: c.yellow("!"), fail: c.red("✗") };
  const width = Math.max(...checks.map((check) => check.name.length));
  for (const check of checks) process.stdout.write(`${mark[check.status]} ${check.name.padEnd(width)}  ${check.detail}\n`);
  const failed = checks.filter((check) => check.status === "fail").length;
  process.stdout.write(
    failed === 0
      ? `cadre doctor: ready for a first run${offline ? " offline (cadre run --rehearse)" : ""}\n`
      : `cadre doctor: ${failed} thing${failed === 1 ? "" : "s"} to fix (marked ✗)\n`,
  );
  return failed === 0 ? 0 : 1;
}
