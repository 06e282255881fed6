// A fan-out scaled by a budget: as many explorers as the budget allows (budget.total is the output-token
// target: cadre run … --budget 20k), then one agent that merges what they found.
// Run it offline: cadre run examples/workflows/fan-out.js --rehearse --budget 2k
export const meta = {
  name: "fan-out",
  description: "Explore a question from as many angles as the budget allows, then merge",
  phases: [{ title: "Explore" }, { title: "Merge" }],
}

const question = args?.question ?? "Where does this project spend its start-up time?"
const ANGLES = ["by reading the entry point", "by profiling", "by the imports", "by the configuration", "by the tests", "by the history"]
const fleet = budget.total ? Math.min(ANGLES.length, Math.max(1, Math.floor(budget.total / 500))) : 3
if (fleet < ANGLES.length) log(`budget allows ${fleet} of ${ANGLES.length} angles; the rest are left out`)

phase("Explore")
const notes = (await parallel(ANGLES.slice(0, fleet).map((angle, i) => () => agent(`${question} Look ${angle}.`, { label: `explore-${i + 1}` })))).filter(Boolean)

phase("Merge")
const answer = await agent(`Merge these notes into one answer to "${question}":\n${notes.map((note, i) => `${i + 1}. ${note}`).join("\n")}`, { label: "merge" })
return { angles: notes.length, answer, spent: budget.spent() }
