import { describe, expect, it } from "vitest";
import { stableKey } from "../../src/util/stable-key.ts";

describe("stableKey", () => {
  it("is equal for the same settings written differently: key order and undefined fields do not count", () => {
    expect(stableKey({ model: "a", env: { A: "1", B: "2" }, cwd: undefined })).toBe(stableKey({ env: { B: "2", A: "1" }, model: "a" }));
    expect(stableKey({ tools: ["Read", "Bash"] })).not.toBe(stableKey({ tools: ["Bash", "Read"] }));
    expect(stableKey({ model: "a" })).not.toBe(stableKey({ model: "b" }));
    expect(stableKey({ maxTurns: 1 })).not.toBe(stableKey({ maxTurns: "1" }));
  });

  it("compares functions and class instances by identity", () => {
    const handler = () => ({ behavior: "allow" });
    class Server {}
    const server = new Server();
    expect(stableKey({ canUseTool: handler, servers: { x: server } })).toBe(stableKey({ canUseTool: handler, servers: { x: server } }));
    expect(stableKey({ canUseTool: handler })).not.toBe(stableKey({ canUseTool: () => ({ behavior: "allow" }) }));
    expect(stableKey({ servers: { x: server } })).not.toBe(stableKey({ servers: { x: new Server() } }));
  });

  it("writes a cycle as the object's identity instead of failing", () => {
    const a: Record<string, unknown> = { name: "a" };
    a.self = a;
    expect(stableKey(a)).toBe(stableKey(a));
  });
});
