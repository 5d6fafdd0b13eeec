// The three error classes that once stood outside the table (UnreadableStorage, NotCanonicalizableError,
// CheckFailure) are HostErrors with stable codes. Invariant: each maps through ERROR_TABLE alone — its
// gRPC status and trailer, its Connect code and header, the client's code and status, the CLI's exit —
// and keeps its own name.
import { Metadata, status as GrpcStatus } from "@grpc/grpc-js";
import { describe, expect, it } from "vitest";
import { type NotCanonicalizableError, jcs } from "../../src/canon/index.js";
import { cliFailure } from "../../src/cli/exit-codes.js";
import { clientError } from "../../src/client/errors.js";
import { CheckFailure } from "../../src/conformance/evidence.js";
import { ERROR_TABLE, ErrorCode, HostError } from "../../src/errors/index.js";
import { connectErrorOf } from "../../src/http/connect-service.js";
import { UnreadableStorage } from "../../src/journal/index.js";
import { withJournalHealth } from "../../src/server/journal-health.js";
import { ERROR_CODE_TRAILER, rpcErrorOfStatus, statusOfError } from "../../src/wire/status.js";

function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error("expected a throw");
}

const STRAYS = [
  {
    name: "UnreadableStorage",
    code: ErrorCode.StorageUnreadable,
    make: () => new UnreadableStorage("page 7 is corrupt"),
  },
  {
    name: "NotCanonicalizableError",
    code: ErrorCode.NotCanonicalizable,
    make: () => thrownBy(() => jcs({ a: Number.NaN })) as NotCanonicalizableError,
  },
  { name: "CheckFailure", code: ErrorCode.CheckFailed, make: () => new CheckFailure("expected a, got b") },
] as const;

describe("the stray error classes join the one table", () => {
  for (const s of STRAYS) {
    const row = ERROR_TABLE[s.code];
    it(`eachStrayClassMapsThroughTheTable: ${s.name} is ${s.code} → ${row.grpc}, HTTP ${row.http}, exit ${row.exit}`, async () => {
      const err = s.make();
      expect(err).toBeInstanceOf(HostError);
      expect({ name: err.name, code: err.code }).toEqual({ name: s.name, code: s.code });
      // gRPC: the table's status, the code in the trailer; read back by a client as the same code.
      const st = statusOfError(err, new Metadata());
      expect(st.code).toBe(GrpcStatus[row.grpc]);
      expect(st.metadata.get(ERROR_CODE_TRAILER)).toEqual([s.code]);
      expect(clientError(rpcErrorOfStatus(st)).code).toBe(s.code);
      // HTTP/Connect: the same status number, the code in a header.
      const ce = connectErrorOf(err);
      expect(ce.code as number).toBe(GrpcStatus[row.grpc]);
      expect(ce.metadata.get(ERROR_CODE_TRAILER)).toBe(s.code);
      // The client and the CLI.
      expect({ code: clientError(err).code, status: clientError(err).status }).toEqual({
        code: s.code,
        status: row.grpc,
      });
      expect(await cliFailure(err)).toMatchObject({ code: row.grpc, exit: row.exit });
    });
  }

  it("anUnreadableJournalStillLeavesAsDataLossWithItsMessage", async () => {
    const impl = withJournalHealth(
      {
        async getSession(): Promise<never> {
          throw new UnreadableStorage("page 7 is corrupt");
        },
      },
      () => {},
    );
    const err = await impl.getSession().catch((e: unknown) => e);
    expect(err).toMatchObject({
      code: ErrorCode.StorageUnreadable,
      message: "the journal cannot be read (page 7 is corrupt); the host reports NOT_SERVING",
    });
    expect(statusOfError(err, new Metadata()).code).toBe(GrpcStatus.DATA_LOSS);
  });
});
