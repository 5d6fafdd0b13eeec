// appendUnderNewFence (src/journal/fenced-append.ts): a fence minted and records appended under it,
// plus the checkpoint bound to the last record, as one commit — on the memory and SQLite backends
// natively and on any other journal through the fallback. Invariant: all or none — a CAS conflict or
// an event that cannot be hashed leaves the fence, the head and the checkpoints exactly as they were.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ErrorCode, HostError } from "../../src/errors/index.js";
import { Lifecycle_Kind } from "../../src/gen/agentsessions/v1/common_pb.js";
import { appendUnderNewFence } from "../../src/journal/fenced-append.js";
import { MemoryJournal } from "../../src/journal/memory/journal.js";
import { SqliteJournal } from "../../src/journal/sqlite/journal.js";
import type { Journal } from "../../src/journal/types.js";
import { endEvent, inputEvent, lifecycleEvent, unhashableEvent } from "./events.js";
import { created } from "./sessions.js";

const DIGEST = `sha256:${"ab".repeat(32)}`;
const dirs: string[] = [];
const journals: Journal[] = [];
afterEach(async () => {
  for (const j of journals.splice(0)) await j.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function sqlite(): Journal {
  const dir = mkdtempSync(join(tmpdir(), "hh-fenced-"));
  dirs.push(dir);
  const j = SqliteJournal.open(join(dir, "journal.db"));
  journals.push(j);
  return j;
}

function memory(): Journal {
  const j = new MemoryJournal();
  journals.push(j);
  return j;
}

/** The same journal without the native method: the helper takes the three separate calls. */
function withoutNative(inner: Journal): Journal {
  return new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop === "appendUnderNewFence") return undefined;
      const value: unknown = Reflect.get(target, prop, receiver);
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

async function rejectsWith(p: Promise<unknown>, code: ErrorCode): Promise<void> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(HostError);
  expect((err as HostError).code).toBe(code);
}

/** Each backend with session "s" created (a journal writes only to a created session). */
const backends: [string, () => Promise<Journal>][] = [
  ["memory", () => created(memory(), "s")],
  ["sqlite", () => created(sqlite(), "s")],
  ["fallback (no native method)", () => created(withoutNative(memory()), "s")],
];

for (const [name, make] of backends) {
  describe(`appendUnderNewFence: ${name}`, () => {
    it("mints the next fence, writes the records under it and binds the checkpoint to the last one", async () => {
      const j = await make();
      await j.appendBatch("s", 0, 0, [inputEvent("a"), endEvent()]);
      const before = await j.newFence("s");
      const { fence, records } = await appendUnderNewFence(
        j,
        "s",
        2,
        [lifecycleEvent(Lifecycle_Kind.LIFECYCLE_SUSPEND)],
        { checkpointDigest: DIGEST },
      );
      expect(fence).toBe(before + 1);
      expect(await j.currentFence("s")).toBe(fence);
      expect(records.map((r) => [r.seq, r.fence])).toEqual([[3, fence]]);
      expect(await j.head("s")).toEqual({ seq: 3, hash: records[0]!.contentHash });
      expect(await j.latestCheckpoint("s")).toMatchObject({
        seq: 3,
        contentHash: records[0]!.contentHash,
        digest: DIGEST,
      });
      expect((await j.getSession("s"))?.computeState).toBe("COLD");
      expect(await j.verify("s")).toMatchObject({ ok: true });
    });

    it("without a checkpoint digest stores no checkpoint; a stale writer is then fenced out", async () => {
      const j = await make();
      const old = await j.newFence("s");
      const { fence } = await appendUnderNewFence(j, "s", 0, [lifecycleEvent(Lifecycle_Kind.LIFECYCLE_RESUME)]);
      expect(fence).toBe(old + 1);
      expect(await j.latestCheckpoint("s")).toBeUndefined();
      await rejectsWith(j.append("s", 1, old, inputEvent("late")), ErrorCode.Fenced);
    });

    it("a CAS conflict is CONFLICT and appends nothing", async () => {
      const j = await make();
      await j.appendBatch("s", 0, 0, [inputEvent("a")]);
      const head = await j.head("s");
      await rejectsWith(
        appendUnderNewFence(j, "s", 0, [lifecycleEvent(Lifecycle_Kind.LIFECYCLE_SUSPEND)], {
          checkpointDigest: DIGEST,
        }),
        ErrorCode.Conflict,
      );
      expect(await j.head("s")).toEqual(head);
      expect(await j.latestCheckpoint("s")).toBeUndefined();
    });

    it("needs at least one event", async () => {
      await rejectsWith(appendUnderNewFence(await make(), "s", 0, []), ErrorCode.InvalidArgument);
    });
  });
}

for (const [name, make] of backends.slice(0, 2)) {
  describe(`appendUnderNewFence is one transaction: ${name}`, () => {
    it("a CAS conflict mints no fence", async () => {
      const j = await make();
      await j.appendBatch("s", 0, 0, [inputEvent("a")]);
      const fence = await j.newFence("s");
      await rejectsWith(
        appendUnderNewFence(j, "s", 5, [lifecycleEvent(Lifecycle_Kind.LIFECYCLE_RESUME)]),
        ErrorCode.Conflict,
      );
      expect(await j.currentFence("s")).toBe(fence);
    });

    it("an event that cannot be hashed leaves fence, head and checkpoints untouched", async () => {
      const j = await make();
      await j.appendBatch("s", 0, 0, [inputEvent("a")]);
      const fence = await j.newFence("s");
      const head = await j.head("s");
      await rejectsWith(
        appendUnderNewFence(j, "s", 1, [lifecycleEvent(Lifecycle_Kind.LIFECYCLE_SUSPEND), unhashableEvent()], {
          checkpointDigest: DIGEST,
        }),
        ErrorCode.InvalidArgument,
      );
      expect(await j.currentFence("s")).toBe(fence);
      expect(await j.head("s")).toEqual(head);
      expect(await j.latestCheckpoint("s")).toBeUndefined();
      expect(await j.verify("s")).toMatchObject({ ok: true });
    });
  });
}
