// The token file reloads (docs/operations.md "Rotating credentials"): a change on disk or a SIGHUP
// puts the new credentials in force whole; a file that no longer parses keeps the old ones.
import { mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { status as GrpcStatus } from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Sessions } from "../../src/gen/agentsessions/v1/session_pb.js";
import { RpcError, createClient } from "../../src/wire/index.js";
import { eventually } from "../fixtures/eventually.js";
import { startFixture, type Fixture } from "./helpers.js";
import { sha256 } from "./principal-fixture.js";

const OLD = "old-token-0123456789abcdef";
const NEW = "new-token-0123456789abcdef";
let dir: string;
let file: string;
let f: Fixture;

const line = (token: string, name: string) => `sha256:${sha256(token)} principal=${name} roles=reader\n`;
const works = async (token: string) => {
  const c = createClient(Sessions, f.server.addr, { metadata: { authorization: `Bearer ${token}` } });
  try {
    // OK when the call succeeds, its gRPC code when it is refused; anything else (a dead server) throws.
    try {
      await c.listSessions({});
      return GrpcStatus.OK as number;
    } catch (err) {
      if (err instanceof RpcError) return err.grpcCode;
      throw err;
    }
  } finally {
    c.close();
  }
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "hh-reload-"));
  file = join(dir, "tokens");
  writeFileSync(file, line(OLD, "old"));
  f = await startFixture({ tokenFile: file });
});
afterAll(async () => {
  await f.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("token file reload", () => {
  it("aChangedTokenFileIsPutInForceWhole", async () => {
    expect(await works(OLD)).toBe(GrpcStatus.OK);
    writeFileSync(file, line(NEW, "new"));
    await eventually("the new token accepted", async () => (await works(NEW)) === GrpcStatus.OK);
    expect(await works(OLD)).toBe(GrpcStatus.PERMISSION_DENIED);
  });

  it("sighupRereadsTheTokenFile", async () => {
    const before = statSync(file);
    writeFileSync(file, line(OLD, "old"));
    // The same mtime: only the SIGHUP can make the server notice.
    utimesSync(file, before.atime, before.mtime);
    expect(await works(OLD)).toBe(GrpcStatus.PERMISSION_DENIED);
    process.emit("SIGHUP", "SIGHUP");
    expect(await works(OLD)).toBe(GrpcStatus.OK);
  });

  it("aTokenFileThatNoLongerParsesKeepsTheCredentialsInForce", async () => {
    const before = statSync(file);
    writeFileSync(file, "sha256:nothex principal=x roles=reader\n");
    utimesSync(file, before.atime, before.mtime);
    process.emit("SIGHUP", "SIGHUP");
    expect(await works(OLD)).toBe(GrpcStatus.OK);
    expect(f.logs.join("")).toContain("token file reload failed");
    expect(f.logs.join("")).toContain("line 1");
  });
});
