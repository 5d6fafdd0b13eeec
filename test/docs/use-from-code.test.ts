// README "Use it from code": every ```js block runs as written (against a host on loopback, the package
// names resolved to this checkout's source by vitest.config.ts) and prints what its comments say. The
// consumer test (test/package/package.test.ts) runs the same blocks with plain Node on the packed package.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { format } from "node:util";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startFixture, type Fixture } from "../server/helpers.js";
import { pointAt, useFromCodeExamples } from "./js-examples.js";

let fx: Fixture;
let dir: string;
beforeAll(async () => {
  fx = await startFixture();
  dir = mkdtempSync(join(tmpdir(), "hh-examples-"));
});
afterAll(async () => {
  await fx?.close();
  rmSync(dir, { recursive: true, force: true });
});

const examples = useFromCodeExamples();

describe("README: use it from code", () => {
  it("has the documented examples", () => {
    expect(examples.length).toBe(2);
    for (const e of examples) expect(e.expected.length).toBeGreaterThan(0);
  });

  for (const [i, example] of examples.entries()) {
    it(`example ${i + 1} prints what its comments say, and again when run a second time`, async () => {
      // A reader runs an example more than once: the second run (a fresh module, the same host) must
      // print the same — the harness registration it makes is the same spec, so it is a no-op.
      for (const run of [1, 2]) {
        const file = join(dir, `example-${i + 1}-${run}.mjs`);
        writeFileSync(file, pointAt(example.code, fx.server.addr, fx.server.registryAddr, dir));
        const printed: string[] = [];
        const spy = vi.spyOn(console, "log").mockImplementation((...args: unknown[]) => {
          printed.push(format(...args));
        });
        try {
          await import(file);
        } finally {
          spy.mockRestore();
        }
        expect(printed, `run ${run}`).toEqual(example.expected);
      }
    });
  }
});
