// A task's result counts once: the host that holds the job's lock records it, and a late result is refused.
import type { Redis } from "ioredis";
import type { RunKeys } from "./keys.ts";
import { type JobResult, JobResultSchema, readJson } from "./wire.ts";

/**
 * A task's result counts once: the host that holds the job's lock writes it
 * to the run's results hash, first write wins. A host whose lock passed to
 * another attempt (it was frozen, or cut off, past the lock) is refused, so
 * its late result neither counts twice nor replaces the retry's. When Redis
 * lost the job (restarted empty, flushed), or the coordinator made it again
 * after such a loss, the first result of the work counts, wherever it ran (the
 * coordinator then cancels the other attempt).
 */
const RECORD = `
if redis.call('GET', KEYS[1]) == ARGV[1]
  or redis.call('EXISTS', KEYS[2]) == 0
  or redis.call('SISMEMBER', KEYS[4], ARGV[2]) == 1 then
  return redis.call('HSETNX', KEYS[3], ARGV[2], ARGV[3])
end
return -1`;

/** "recorded"; "stands" when another attempt's result was recorded first; "refused" when the lock passed to another attempt. */
export type RecordOutcome = "recorded" | "stands" | "refused";

export async function recordResult(redis: Redis, keys: RunKeys, jobId: string, token: string, result: JobResult): Promise<RecordOutcome> {
  const reply = await redis.eval(RECORD, 4, keys.lock(jobId), keys.job(jobId), keys.results, keys.recreated, token, jobId, JSON.stringify(result));
  return reply === 1 ? "recorded" : reply === 0 ? "stands" : "refused";
}

/** The recorded results of these jobs, by job id (those not recorded are absent). */
export async function readResults(redis: Redis, keys: RunKeys, jobIds: readonly string[]): Promise<Map<string, JobResult>> {
  const found = new Map<string, JobResult>();
  if (jobIds.length === 0) return found;
  const texts = await redis.hmget(keys.results, ...jobIds);
  texts.forEach((text, index) => {
    if (text !== null) found.set(jobIds[index]!, readJson(JobResultSchema, text, "a job's result"));
  });
  return found;
}
