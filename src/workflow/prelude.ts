/**
 * The dialect's functions as the script sees them, written in JavaScript that
 * runs inside the sandbox: `agent`, `parallel`, `pipeline`, `phase`, `log`,
 * `budget` (and its `budget.usd`), `workflow`, `args`, over a few host calls that pass JSON text
 * only. It also takes the clock and randomness away (they would break a
 * resumed run's replay), adds what QuickJS lacks of the CLI's (`Intl`, intl.ts) and leaves
 * the host calls unreachable to the script.
 */
import { INTL_ON_FIRST_USE } from "./intl.ts";

/** The most items one parallel() or pipeline() call takes (the CLI's limit). */
export const MAX_ITEMS = 4096;

/**
 * A function expression the sandbox calls once per context with the host
 * calls object, the args as JSON, the budget's target (or null), whether
 * this context is a nested workflow(), and the strand its top level goes on
 * (a nested workflow's calls go on in the strand of its workflow() call, as in the CLI).
 */
export const PRELUDE = `(function (host, argsJson, budgetTotal, nested, callerStrand) {
  "use strict";
  ${INTL_ON_FIRST_USE}
  const decode = (text) => (text === undefined ? undefined : JSON.parse(text));
  const encode = (value) => (value === undefined ? undefined : JSON.stringify(value));
  const messageOf = (error) => (error instanceof Error ? error.message : String(error));
  const define = (name, value) => Object.defineProperty(globalThis, name, { value, writable: false, enumerable: false, configurable: false });
  const unavailable = (what) => () => {
    throw new Error(what + " is unavailable in workflow scripts (a resumed run must replay the same calls); pass times in through args");
  };

  const RealDate = Date;
  function SafeDate(...parts) {
    if (new.target === undefined || parts.length === 0) unavailable("new Date() without arguments")();
    return Reflect.construct(RealDate, parts, new.target);
  }
  SafeDate.prototype = RealDate.prototype;
  SafeDate.UTC = RealDate.UTC;
  SafeDate.parse = RealDate.parse;
  SafeDate.now = unavailable("Date.now()");
  Object.defineProperty(RealDate.prototype, "constructor", { value: SafeDate });
  globalThis.Date = SafeDate;
  Math.random = unavailable("Math.random()");

  // As the CLI's runtime shows a value: a primitive as its text, an object or a function as a tag.
  const textOf = (value) => (value === null || (typeof value !== "object" && typeof value !== "function") ? String(value) : "[" + typeof value + "]");
  // A number (or another primitive) as a prompt is its text, as in the CLI; undefined or an object is refused (no agent on "[object]").
  const promptOf = (prompt) => (["number", "boolean", "bigint"].includes(typeof prompt) ? String(prompt) : prompt);

  // Options that are not an object are none, as the CLI ignores them.
  const optionsOf = (opts) => (opts !== null && typeof opts === "object" ? opts : {});

  // The strand a call is made in (claude-code-keys.ts): the top level's, or a parallel() or pipeline() item's while
  // that item's code runs (its first synchronous part, and each pipeline stage as it starts).
  let strand = callerStrand;
  const inStrand = (item, run) => {
    const outer = strand;
    strand = item;
    try {
      return run();
    } finally {
      strand = outer;
    }
  };

  // What the body's awaits are made of (check.ts): the strand they were awaited in comes back with what they give.
  const then = Promise.prototype.then;
  const keeper = (awaited) => {
    const own = strand;
    return then.call(
      Promise.resolve(awaited),
      (value) => ({ own, value }),
      (error) => ({ own, error, failed: true }),
    );
  };
  keeper.back = (settled) => {
    strand = settled.own;
    if (settled.failed) throw settled.error;
    return settled.value;
  };
  // A callback given to then() runs in the strand it was given in, as the body's awaits do.
  const inOwnStrand = (callback) => {
    if (typeof callback !== "function") return callback;
    const own = strand;
    return (value) => inStrand(own, () => callback(value));
  };
  Object.defineProperty(Promise.prototype, "then", {
    value: function (onFulfilled, onRejected) {
      return then.call(this, inOwnStrand(onFulfilled), inOwnStrand(onRejected));
    },
    writable: true,
    configurable: true,
  });

  define("agent", async (prompt, opts) => decode(await host.agent(promptOf(prompt), encode(optionsOf(opts)), strand)));

  // The CLI's checks before a parallel() or pipeline() starts, in its order and words: the array, then (with items)
  // the run's agent cap and token budget, then the functions. False: nothing to run.
  const startable = (name, items, functions, notArray, notFunctions) => {
    if (!Array.isArray(items)) throw new TypeError(notArray);
    if (items.length > ${MAX_ITEMS}) throw new RangeError(name + "() takes at most ${MAX_ITEMS} items; got " + items.length);
    if (items.length === 0) return false;
    host.checkCaps();
    if (functions.some((fn) => typeof fn !== "function")) throw new TypeError(notFunctions);
    return true;
  };
  // Each item's result, or null and a log line for one that throws: once started, neither call rejects.
  const settleEach = (name, items, run) =>
    Promise.all(
      items.map(async (item, index) => {
        try {
          return await run(item, index);
        } catch (error) {
          host.log(name + "[" + index + "] failed: " + messageOf(error));
          return null;
        }
      }),
    );

  // As the CLI's: the strand forks before the checks, and joins once every item has settled.
  define("parallel", async (thunks) => {
    const fork = host.fork(strand, "parallel");
    if (!startable("parallel", thunks, thunks, "parallel() expects an array of functions", "parallel() expects an array of functions, not promises. Wrap each call: () => agent(...)")) return [];
    const results = await settleEach("parallel", thunks, (thunk, index) => inStrand(host.item(fork, index), () => thunk()));
    host.join(fork);
    return results;
  });
  define("pipeline", async (items, ...stages) => {
    const fork = host.fork(strand, "pipeline");
    if (!startable("pipeline", items, stages, "pipeline() expects an array as the first argument", "pipeline() stages must be functions: pipeline(items, item => ..., result => ...)")) return [];
    const results = await settleEach("pipeline", items, async (item, index) => {
      const own = host.item(fork, index);
      let value = await item;
      // A stage that gives null drops the item: its later stages do not run (no agent on a prompt made of null).
      for (const stage of stages) {
        if (value === null) break;
        value = await inStrand(own, () => stage(value, item, index));
      }
      return value;
    });
    host.join(fork);
    return results;
  });
  define("phase", (title) => void host.phase(String(title)));
  define("log", (message) => void host.log(textOf(message)));
  define(
    "budget",
    Object.freeze({
      total: budgetTotal,
      spent: () => host.spent(),
      remaining: () => (budgetTotal === null ? Infinity : Math.max(0, budgetTotal - host.spent())),
      // cadre's dollars beside Claude Code's tokens: what the run's agents spent, and what is left of the budgets over a call.
      usd: Object.freeze({
        spent: () => host.spentUsd(),
        remaining: (agentType) => {
          if (agentType !== undefined && typeof agentType !== "string") throw new TypeError("budget.usd.remaining() takes an agent type: a string");
          return host.remainingUsd(agentType);
        },
      }),
    }),
  );
  define("workflow", async (ref, childArgs) => {
    if (nested) throw new Error("workflow() nests one level only: a workflow run by workflow() cannot run another");
    return decode(await host.workflow(encode(ref), encode(childArgs), strand));
  });
  define("args", decode(argsJson));
  const quiet = () => {};
  define("console", Object.freeze({ log: quiet, info: quiet, warn: quiet, error: quiet, debug: quiet }));
  return (body) =>
    body(keeper).then(
      (value) => {
        let text;
        try {
          text = encode(value);
        } catch (error) {
          return host.fail("the script's return value is not JSON: " + messageOf(error));
        }
        host.done(text);
      },
      (error) => host.fail(error instanceof Error ? (error.name + ": " + error.message) : "uncaught: " + String(error)),
    );
})`;
