// The doc-script runner itself: a documented script that fails says which of its lines failed, with the
// script's stderr and the end of its stdout (a README walkthrough failing in CI once printed none of them).
import { expect, it } from "vitest";
import { tmpdir } from "node:os";
import { bash, strictScript } from "./sh-script.js";

it("aFailingDocumentScriptNamesItsFailingLineWithStderrAndStdout", async () => {
  const script = strictScript("echo first\necho oops >&2\nfalse\necho never");
  const err = await bash(script, tmpdir(), 10_000).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(Error);
  const text = (err as Error).message;
  expect(text).toContain("script failed: exit 1");
  expect(text).toContain("exit 1 at document line 3: false");
  expect(text).toContain("oops");
  expect(text).toContain("first");
  expect(text).not.toContain("never");
});

it("aCommandFailingInsideAConditionDoesNotStopTheScript", async () => {
  const out = await bash(strictScript("if false; then echo no; fi\nfalse || echo recovered"), tmpdir(), 10_000);
  expect(out).toBe("recovered\n");
});
