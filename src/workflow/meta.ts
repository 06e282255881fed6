/** The `meta` literal every workflow script begins with: its name, description and phases. */
import { z } from "zod";

export const WorkflowPhaseSchema = z.looseObject({
  title: z.string().min(1),
  detail: z.string().optional(),
  model: z.string().optional(),
});

export const WorkflowMetaSchema = z.looseObject({
  name: z.string().min(1),
  description: z.string().min(1),
  whenToUse: z.string().optional(),
  phases: z.array(WorkflowPhaseSchema).optional(),
});

export type WorkflowPhase = z.infer<typeof WorkflowPhaseSchema>;
export type WorkflowMeta = z.infer<typeof WorkflowMetaSchema>;
