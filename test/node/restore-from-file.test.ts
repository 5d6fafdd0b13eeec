// docs/protocol.md §8.9, `file`: a node beside its host restores a snapshot from a file the host names,
// with exactly the checks of bytes on the wire — it installs nothing unless the whole file has the
// trailer's size and sha256 — so a host need neither read nor send a stored blob to restore it.
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Actors } from "../../src/gen/harnesshost/v1/actors_pb.js";
import { ErrorCode, isHostError } from "../../src/errors/index.js";
import { ActorsClient, RemoteHarness, serveHarness } from "../../src/node/index.js";
import type { HarnessNode } from "../../src/node/index.js";
import { createClient } from "../../src/wire/index.js";
import type { MethodsOf, ServiceClient } from "../../src/wire/index.js";
import { RecordingSink, ScriptedHarness, failureOf, startInfo } from "./fixtures.js";

const dir = mkdtempSync(join(tmpdir(), "hh-file-restore-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const sha256 = (b: Uint8Array): string => createHash("sha256").update(b).digest("hex");

describe("RestoreActorWhole from a file (§8.9)", () => {
  let node: HarnessNode;
  let actors: ActorsClient;
  let raw: ServiceClient<MethodsOf<typeof Actors>>;
  const remotes: RemoteHarness[] = [];
  let turnNo = 0;

  async function turn(session: string, command: string): Promise<string[]> {
    const r = new RemoteHarness({ address: node.address, session });
    remotes.push(r);
    turnNo += 1;
    const sink = new RecordingSink();
    await r.run(startInfo(turnNo.toString(16).padStart(16, "0"), command), sink, new AbortController().signal);
    return sink.outputs();
  }

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
    node = await serveHarness(() => new ScriptedHarness(), { listen: `unix://${join(dir, "node.sock")}` });
    actors = new ActorsClient({ address: node.address });
    raw = createClient(Actors, node.address);
  });
  afterAll(async () => {
    for (const r of remotes) r.close();
    actors.close();
    raw.close();
    await node.close();
  });

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
