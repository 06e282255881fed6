/**
 * The sandbox's thread (a node:worker_threads Worker, on Node and Deno): it runs the scripts' engine, so cadre's own
 * thread (its signals, the --ui page, other MCP clients) never waits on a script that computes. The dialect's host
 * calls cross to cadre's thread as messages; those the script waits on at once block this thread until answered.
 */
import { parentPort, receiveMessageOnPort, workerData } from "node:worker_threads";
import { quickjs, SandboxEngine } from "./engine.ts";
import type { SandboxHost } from "./sandbox-contract.ts";
import {
  crossingError,
  type FromThread,
  SYNC_WAITING,
  type SyncAnswer,
  type SyncCallName,
  type ThreadData,
  type ToThread,
} from "./thread-messages.ts";

const { answers, flag } = workerData as ThreadData;
const waiting = new Int32Array(flag);
const port = parentPort!;
/** The agent() and workflow() calls cadre's thread has not answered yet, by number. */
const pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
let nextCall = 0;
let engine: SandboxEngine | undefined;

// The engine's module loads while cadre's thread still prepares the run.
void quickjs();

function post(message: FromThread): void {
  port.postMessage(message);
}

/** A host call the script waits on at once: this thread sleeps until cadre's thread has answered it. */
function callNow(run: number, name: SyncCallName, args: unknown[] = []): number | undefined {
  Atomics.store(waiting, 0, SYNC_WAITING);
  post({ type: "sync", run, name, args });
  Atomics.wait(waiting, 0, SYNC_WAITING);
  const answer = receiveMessageOnPort(answers)?.message as SyncAnswer | undefined;
  if (answer === undefined) throw new Error(`${name}(): cadre gave no answer`);
  if (!answer.ok) throw new Error(answer.message);
  return answer.value;
}

function callLater(run: number, name: "agent" | "workflow", args: [unknown, unknown, number]): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const call = nextCall++;
    pending.set(call, { resolve, reject });
    post({ type: "call", run, call, name, args });
  });
}

/** The host of the script numbered `run`, as messages to cadre's thread. */
function hostOf(run: number): SandboxHost {
  return {
    agent: (prompt, options, strand) => callLater(run, "agent", [prompt, options, strand]),
    fork: (strand, kind) => callNow(run, "fork", [strand, kind]) ?? 0,
    item: (fork, index) => callNow(run, "item", [fork, index]) ?? 0,
    join: (fork) => void callNow(run, "join", [fork]),
    workflow: (ref, args, strand) => callLater(run, "workflow", [ref, args, strand]),
    log: (text) => post({ type: "note", run, name: "log", text }),
    phase: (text) => post({ type: "note", run, name: "phase", text }),
    checkCaps: () => void callNow(run, "checkCaps"),
    spent: () => callNow(run, "spent") ?? 0,
    spentUsd: () => callNow(run, "spentUsd") ?? 0,
    remainingUsd: (agentType) => callNow(run, "remainingUsd", [agentType]) ?? Number.POSITIVE_INFINITY,
  };
}

function runScript({ run, script }: Extract<ToThread, { type: "run" }>): void {
  if (engine === undefined) {
    post({ type: "settled", run, ok: false, error: { message: "the workflow sandbox is closed" } });
    return;
  }
  engine.run({ ...script, host: hostOf(run) }).then(
    (json) => post({ type: "settled", run, ok: true, json }),
    (error: unknown) => post({ type: "settled", run, ok: false, error: crossingError(error) }),
  );
}

port.on("message", (message: ToThread) => {
  switch (message.type) {
    case "open":
      SandboxEngine.open(message.limits).then(
        (opened) => {
          engine = opened;
          post({ type: "opened" });
        },
        (error: unknown) => post({ type: "open_failed", error: crossingError(error) }),
      );
      return;
    case "run":
      runScript(message);
      return;
    case "answer": {
      const call = pending.get(message.call);
      pending.delete(message.call);
      if (message.ok) call?.resolve(message.value);
      else call?.reject(new Error(message.message));
      return;
    }
    case "close":
      engine?.close();
      engine = undefined;
      pending.clear();
      return;
  }
});
