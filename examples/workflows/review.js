// A review as a pipeline: each dimension's findings are verified as soon as that dimension's review ends, with
// no barrier between the stages. Run it offline: cadre run examples/workflows/review.js --rehearse
export const meta = {
  name: "review",
  description: "Review the code along a few dimensions, then verify each finding",
  phases: [{ title: "Review" }, { title: "Verify" }],
}

const DIMENSIONS = args?.dimensions ?? ["bugs", "security", "performance"]
const FINDINGS = {
  type: "object",
  properties: { findings: { type: "array", items: { type: "object", properties: { file: { type: "string" }, title: { type: "string" } }, required: ["file", "title"] } } },
  required: ["findings"],
}
const VERDICT = { type: "object", properties: { real: { type: "boolean" }, why: { type: "string" } }, required: ["real", "why"] }

phase("Review")
const reviewed = await pipeline(
  DIMENSIONS,
  (dimension) => agent(`Review the code in this directory for ${dimension} problems. List each finding with its file.`, { label: `review:${dimension}`, phase: "Review", schema: FINDINGS }),
  (review, dimension) =>
    parallel(
      review.findings.map((finding) => () =>
        agent(`Try to refute this ${dimension} finding in ${finding.file}: ${finding.title}. Say whether it is real.`, { label: `verify:${dimension}`, phase: "Verify", schema: VERDICT })
          .then((verdict) => ({ ...finding, dimension, verdict })),
      ),
    ),
)
const confirmed = reviewed.flat().filter(Boolean).filter((finding) => finding.verdict?.real)
log(`${confirmed.length} of ${reviewed.flat().filter(Boolean).length} findings confirmed`)
return { confirmed }
