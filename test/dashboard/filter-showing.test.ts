// Which parts of the table's filters a link to a row clears: those that hide the row, and no others.
import { describe, expect, it } from "vitest";
// @ts-expect-error the page's plain JavaScript has no declarations here (tsconfig.page.json checks it as the browser runs it)
import { filterShowing, NO_FILTER } from "../../src/dashboard/page/rows.js";

const lead = { key: "t0", name: "lead", status: "succeeded", agent: null };

describe("filterShowing", () => {
  it("clears nothing for a row the filters let through", () => {
    const filter = { status: "succeeded", agent: "", query: " LE " };
    expect(filterShowing(filter, lead)).toEqual({ filter, cleared: [] });
    expect(filterShowing(NO_FILTER, lead)).toEqual({ filter: NO_FILTER, cleared: [] });
  });

  it("clears each part that hides the row, and keeps the others", () => {
    expect(filterShowing({ status: "failed", agent: "", query: "lea" }, lead)).toEqual({
      filter: { status: "", agent: "", query: "lea" },
      cleared: ["status filter"],
    });
    expect(filterShowing({ status: "failed", agent: "fixer", query: "fix" }, lead)).toEqual({
      filter: NO_FILTER,
      cleared: ["status filter", "agent filter", "search"],
    });
  });
});
