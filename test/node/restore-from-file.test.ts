// docs/protocol.md §8.9 and §8.11, `file`: a node beside its host restores a snapshot from a file the
// host names, with exactly the checks of bytes on the wire — it installs nothing unless the whole file
// has the trailer's size and sha256 — and writes a snapshot to a new file whose bytes are exactly those
// its trailer names, so a host need neither receive, read nor send a blob's bytes.
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Actors } from "../../src/gen/harnesshost/v1/actors_pb.js";
import { ErrorCode, isHostError } from "../../src/errors/index.js";
import { ActorsClient } from "../../src/node/index.js";
import type { MethodsOf, ServiceClient } from "../../src/wire/index.js";
import { failureOf } from "./fixtures.js";
import { type ScriptedNode, startScriptedNode } from "./scripted-node.js";

const dir = mkdtempSync(join(tmpdir(), "hh-file-restore-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const sha256 = (b: Uint8Array): string => createHash("sha256").update(b).digest("hex");

describe("RestoreActorWhole from a file (§8.9)", () => {
  let rig: ScriptedNode;
  let actors: ActorsClient;
  let raw: ServiceClient<MethodsOf<typeof Actors>>;
  const turn = (session: string, command: string): Promise<string[]> => rig.turn(session, command);

  /** A snapshot of `session` after `counts` count turns, written to a file. */
  async function snapshotFile(session: string, counts: number): Promise<{ path: string; bytes: Uint8Array }> {
    for (let i = 0; i < counts; i++) await turn(session, "count");
    const bytes = await actors.snapshot(session);
    const path = join(dir, `${session}.blob`);
    writeFileSync(path, bytes);
    return { path, bytes };
  }

  const sessions = async (prefix: string) =>
    (await actors.list()).map((a) => a.session).filter((s) => s.startsWith(prefix));

  beforeAll(async () => {
    rig = await startScriptedNode(dir);
    ({ actors, raw } = rig);
  });
  afterAll(() => rig.close());

  it("is reported in NodeInfo", async () => {
    expect((await actors.nodeInfo()).restoreFromFile).toBe(true);
  });

  it("aFileRestoreInstallsTheStateTheFileHolds: the actor continues from it", async () => {
    const { path, bytes } = await snapshotFile("sess-f1", 2);
    const size = await actors.restoreFile("sess-f1-copy", { path, size: bytes.length, sha256: sha256(bytes) });
    expect(size).toBe(bytes.length);
    expect(await turn("sess-f1-copy", "count")).toEqual(["count=3"]);
  });

  it("aFileThatDoesNotHashToTheTrailerInstallsNothing: an altered, resized or missing file is DATA_LOSS naming the digest and the live actor stays", async () => {
    const { path, bytes } = await snapshotFile("sess-f2", 1);
    const digest = sha256(bytes);
    const file = { path, size: bytes.length, sha256: digest };
    const refused = async (what: string) => {
      const err = await failureOf(actors.restoreFile("sess-f2", file, { replace: true }));
      expect(isHostError(err, ErrorCode.DataLoss), what).toBe(true);
      expect((err as Error).message, what).toContain(digest);
      expect(await sessions("sess-f2-"), what).toEqual([]);
    };
    const altered = Uint8Array.from(bytes);
    const mid = Math.floor(altered.length / 2);
    altered[mid] = (altered[mid] ?? 0) ^ 0xff;
    writeFileSync(path, altered);
    await refused("altered");
    writeFileSync(path, bytes.subarray(0, bytes.length - 1));
    await refused("truncated");
    writeFileSync(path, new Uint8Array([...bytes, 0]));
    await refused("grown");
    rmSync(path);
    await refused("missing");
    // The refused restores replaced nothing: the live actor continues its own count.
    expect(await turn("sess-f2", "count")).toEqual(["count=2"]);
  });

  it("aFileRestoreNamesOneAbsoluteRegularFile: a relative path, a directory, or data and a file together are INVALID_ARGUMENT and install nothing", async () => {
    const { path, bytes } = await snapshotFile("sess-f3", 1);
    const trailer = { sha256: sha256(bytes), size: BigInt(bytes.length), codec: "v8/1" };
    const cases: [string, Parameters<typeof raw.restoreActorWhole>[0]][] = [
      ["relative", { header: { session: "sess-f3-a" }, file: "sess-f3.blob", trailer }],
      ["directory", { header: { session: "sess-f3-b" }, file: dir, trailer }],
      ["both", { header: { session: "sess-f3-c" }, data: bytes, file: path, trailer }],
    ];
    for (const [what, req] of cases)
      expect(isHostError(await failureOf(raw.restoreActorWhole(req)), ErrorCode.InvalidArgument), what).toBe(true);
    expect(await sessions("sess-f3-")).toEqual([]);
  });

  it("applies the header's checks first: an existing actor without replace is ALREADY_EXISTS", async () => {
    const { path, bytes } = await snapshotFile("sess-f4", 1);
    const err = await failureOf(actors.restoreFile("sess-f4", { path, size: bytes.length, sha256: sha256(bytes) }));
    expect(isHostError(err, ErrorCode.AlreadyExists)).toBe(true);
    expect(await turn("sess-f4", "count")).toEqual(["count=2"]);
  });
});

describe("SnapshotActor to a file (§8.11)", () => {
  let rig: ScriptedNode;
  let actors: ActorsClient;

  async function count(session: string, n: number): Promise<void> {
    for (let i = 0; i < n; i++) await rig.turn(session, "count");
  }

  beforeAll(async () => {
    rig = await startScriptedNode(dir, "node2.sock");
    ({ actors } = rig);
  });
  afterAll(() => rig.close());

  it("is reported in NodeInfo", async () => {
    expect((await actors.nodeInfo()).snapshotToFile).toBe(true);
  });

  it("aSnapshotFileHoldsExactlyTheBytesItsTrailerNames: the same bytes as the stream, and they restore", async () => {
    await count("sess-s1", 2);
    const path = join(dir, "sess-s1.snap");
    const trailer = await actors.snapshotToFile("sess-s1", path);
    const written = readFileSync(path);
    const streamed = await actors.snapshot("sess-s1");
    expect(trailer).toEqual({ sha256: sha256(written), size: written.length, codec: "v8/1" });
    expect(sha256(written)).toBe(sha256(streamed));
    await actors.restoreFile("sess-s1-copy", { path, size: trailer.size, sha256: trailer.sha256 });
    await count("sess-s1-copy", 1);
    expect((await actors.list()).find((a) => a.session === "sess-s1-copy")?.turns).toBeGreaterThan(0);
  });

  it("aSnapshotFileIsAlwaysNew: an existing path is FAILED_PRECONDITION and left as it was; a relative path INVALID_ARGUMENT", async () => {
    await count("sess-s2", 1);
    const path = join(dir, "sess-s2.snap");
    writeFileSync(path, "keep me");
    expect(isHostError(await failureOf(actors.snapshotToFile("sess-s2", path)), ErrorCode.FailedPrecondition)).toBe(
      true,
    );
    expect(readFileSync(path, "utf8")).toBe("keep me");
    expect(isHostError(await failureOf(actors.snapshotToFile("sess-s2", "rel.snap")), ErrorCode.InvalidArgument)).toBe(
      true,
    );
  });

  it("a snapshot over the host's snapshotBytes is RESOURCE_EXHAUSTED", async () => {
    await count("sess-s3", 1);
    const small = new ActorsClient({
      address: rig.node.address,
      limits: { nodeCallMs: 10_000, snapshotMs: 10_000, historyUploadMs: 10_000, snapshotBytes: 4 },
    });
    try {
      const err = await failureOf(small.snapshotToFile("sess-s3", join(dir, "sess-s3.snap")));
      expect(isHostError(err, ErrorCode.ResourceExhausted)).toBe(true);
    } finally {
      small.close();
    }
  });
});
