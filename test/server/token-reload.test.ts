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

const line = (token: string, name: string) => `sha256:${sha256(token)} principal=${name} roles=reader\n`;
const works = async (f: Fixture, token: string) => {
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
/** A server on its own token file holding OLD's line; `credentialPollMs` 0 reloads on SIGHUP only. */
const serverOn = async (name: string, credentialPollMs: number) => {
  const file = join(dir, name);
  writeFileSync(file, line(OLD, "old"));
  return { file, f: await startFixture({ tokenFile: file, credentialPollMs }) };
};
/** Puts `text` in `file` and gives it back the timestamps it had, as a rewrite within one clock tick would. */
const rewriteInTheSameTick = (file: string, text: string) => {
  const before = statSync(file);
  writeFileSync(file, text);
  utimesSync(file, before.atime, before.mtime);
};

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "hh-reload-"));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("token file reload", () => {
  it("aChangedTokenFileIsPutInForceWhole", async () => {
    const { file, f } = await serverOn("changed", 20);
    try {
      expect(await works(f, OLD)).toBe(GrpcStatus.OK);
      writeFileSync(file, line(NEW, "new"));
      await eventually("the new token accepted", async () => (await works(f, NEW)) === GrpcStatus.OK);
      expect(await works(f, OLD)).toBe(GrpcStatus.PERMISSION_DENIED);
    } finally {
      await f.close();
    }
  });

  it("aRewriteThatKeepsSizeAndMtimeIsStillNoticed", async () => {
    // The same size and the same mtime as before: only what the file holds changed.
    const { file, f } = await serverOn("same-tick", 20);
    try {
      rewriteInTheSameTick(file, line(NEW, "new"));
      await eventually("the new token accepted", async () => (await works(f, NEW)) === GrpcStatus.OK);
      expect(await works(f, OLD)).toBe(GrpcStatus.PERMISSION_DENIED);
    } finally {
      await f.close();
    }
  });

  it("sighupRereadsTheTokenFile", async () => {
    const { file, f } = await serverOn("hup", 0);
    try {
      writeFileSync(file, line(NEW, "new"));
      // No polling: only the SIGHUP can make this server notice.
      expect(await works(f, NEW)).toBe(GrpcStatus.PERMISSION_DENIED);
      process.emit("SIGHUP", "SIGHUP");
      expect(await works(f, NEW)).toBe(GrpcStatus.OK);
      expect(await works(f, OLD)).toBe(GrpcStatus.PERMISSION_DENIED);
    } finally {
      await f.close();
    }
  });

  it("aTokenFileThatNoLongerParsesKeepsTheCredentialsInForce", async () => {
    const { file, f } = await serverOn("bad", 0);
    try {
      writeFileSync(file, "sha256:nothex principal=x roles=reader\n");
      process.emit("SIGHUP", "SIGHUP");
      expect(await works(f, OLD)).toBe(GrpcStatus.OK);
      expect(f.logs.join("")).toContain("token file reload failed");
      expect(f.logs.join("")).toContain("line 1");
    } finally {
      await f.close();
    }
  });
});
