// A parent's answer to a child's permission request (answer_permission, or the dashboard), turned into the CLI's.
import type { PendingPermission } from "../orchestrator/index.ts";
import { askUserQuestion, type PermissionDecision, planReview } from "../worker/index.ts";
import { InvalidArgumentError } from "./errors.ts";

/** A parent's answer to a child's permission request (answer_permission, or the dashboard). */
export interface Answer {
  decision: "allow" | "deny";
  message?: string;
  interrupt?: boolean;
  answers?: Record<string, string | string[]>;
}

/** The decision an answer means for this kind of request (a tool call, AskUserQuestion, ExitPlanMode). */
export function decisionFor(pending: PendingPermission, answer: Answer): PermissionDecision {
  if (pending.kind === "question") {
    if (answer.decision === "deny") return askUserQuestion.skip(answer.message);
    if (!answer.answers || Object.keys(answer.answers).length === 0) {
      const questions = askUserQuestion
        .questions(pending)
        .map((q) => `"${q.question}"`)
        .join(", ");
      throw new InvalidArgumentError(`This request is a question: give answers keyed by question text (${questions}), or deny to skip it.`);
    }
    try {
      return askUserQuestion.answer(pending, answer.answers);
    } catch (error) {
      throw new InvalidArgumentError((error as Error).message);
    }
  }
  if (pending.kind === "plan") {
    if (answer.decision === "allow") return planReview.approve();
    return answer.interrupt ? planReview.reject(answer.message) : planReview.revise(answer.message ?? "Revise the plan.");
  }
  if (answer.decision === "allow") return { behavior: "allow" };
  return { behavior: "deny", message: answer.message ?? "The parent session denied this tool call.", ...(answer.interrupt && { interrupt: true }) };
}
