// The rehearsal server's routes without a server: what a request asks for, and which script its URL names.
import { describe, expect, it } from "vitest";
import { isErrorAnswer } from "../../src/rehearsal/api-error.ts";
import { type Route, routeOf, scriptOf } from "../../src/rehearsal/routing.ts";

const route = (method: string, url: string): Route => {
  const routed = routeOf(method, url);
  if (isErrorAnswer(routed)) throw new Error(routed.message);
  return routed;
};
const bound = new Map([["p1", "review"]]);
const boundScript = (process: string) => bound.get(process);

describe("the rehearsal routes", () => {
  it.each([
    ["/v1/messages?beta=true", "default"],
    ["/s/plan%20b/v1/messages", "plan b"],
    ["/p/p1/v1/messages", "review"],
    ["/p/p2/v1/messages", "(unbound process p2)"],
  ])("POST %s plays script %s", (url, script) => {
    expect(scriptOf(route("POST", url), boundScript)).toBe(script);
  });

  it("tell a token count from a model turn", () => {
    expect(route("POST", "/s/a/v1/messages/count_tokens").countTokens).toBe(true);
    expect(route("POST", "/s/a/v1/messages").countTokens).toBe(false);
  });

  it("answer other methods and paths with a 404, and a name that is not percent-encoding with a 400", () => {
    expect(routeOf("GET", "/v1/messages")).toMatchObject({ status: 404 });
    expect(routeOf("POST", "/api/hello")).toMatchObject({ status: 404 });
    expect(scriptOf(route("POST", "/s/%E0%A4%A/v1/messages"), boundScript)).toMatchObject({ status: 400 });
  });
});
