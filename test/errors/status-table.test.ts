// The one error table (docs/protocol.md §10). Invariants: every ErrorCode maps to the gRPC status grpc-js
// itself numbers that way, and back to a code of the same status; src/errors loads no transport at
// runtime (type imports only), so any layer — and the CLI's --help — can throw a HostError for free.
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Code } from "@connectrpc/connect";
import { codeToHttpStatus, codeToString } from "@connectrpc/connect/protocol-connect";
import { Metadata, status } from "@grpc/grpc-js";
import { describe, expect, it } from "vitest";
import { clientError, STATUS_CODES, ERROR_CODES as CLIENT_ERROR_CODES } from "../../src/client/errors.js";
import { ERROR_CODE_TRAILER, rpcErrorOfStatus } from "../../src/wire/status.js";
import {
  ERROR_CODES,
  ERROR_TABLE,
  ErrorCode,
  errorCodeOfStatus,
  errorCodeOfWire,
  ExitCode,
  exitCodeOfStatus,
  type GrpcStatusName,
  grpcStatusNameOf,
  grpcStatusOf,
  HostError,
  invalidArgument,
} from "../../src/errors/index.js";

const repo = resolve(import.meta.dirname, "../..");

describe("the error table", () => {
  it("everyErrorCodeMapsToTheGrpcStatusOfItsName", () => {
    for (const code of Object.values(ErrorCode)) {
      const name = grpcStatusNameOf(code);
      expect(grpcStatusOf(code), code).toBe(status[name]);
      expect(grpcStatusOf(errorCodeOfStatus(grpcStatusOf(code))), code).toBe(grpcStatusOf(code));
    }
    expect(errorCodeOfStatus(status.UNKNOWN)).toBe(ErrorCode.Internal);
  });

  it("everyErrorCodeHasAGrpcStatusAConnectCodeAnHttpStatusAndAnExitCode", () => {
    const exits = new Set<number>(Object.values(ExitCode));
    for (const code of Object.values(ErrorCode)) {
      const row = ERROR_TABLE[code];
      expect(row, code).toBeDefined();
      // The Connect code and HTTP status are the ones the Connect protocol gives that gRPC status.
      const connect = status[row.grpc] as number as Code;
      expect(row.connect, code).toBe(codeToString(connect));
      expect(row.http, code).toBe(codeToHttpStatus(connect));
      expect(exits.has(row.exit) && row.exit !== ExitCode.Ok, code).toBe(true);
    }
    expect(Object.keys(ERROR_TABLE).sort()).toEqual(Object.values(ErrorCode).sort());
  });

  const CONNECT_HTTP = new Set(
    Object.keys(status)
      .filter((n) => Number.isNaN(Number(n)) && n !== "OK")
      .map((n) => codeToHttpStatus(status[n as GrpcStatusName] as number as Code)),
  );
  it.each(ERROR_CODES)("everyErrorCodeMapsToExactlyOneGrpcStatusHttpStatusAndExitCode: %s", (code) => {
    const rows = Object.entries(ERROR_TABLE).filter(([c]) => c === code);
    expect(rows.length).toBe(1);
    const row = rows[0]![1];
    expect(typeof status[row.grpc]).toBe("number");
    expect(CONNECT_HTTP.has(row.http)).toBe(true);
    expect(Object.values(ExitCode)).toContain(row.exit);
    expect(row.exit).not.toBe(ExitCode.Ok);
  });

  it("theClientsVocabularyIsTheTables: its codes are ErrorCode's, its statuses every gRPC name but OK", () => {
    expect(CLIENT_ERROR_CODES).toBe(ERROR_CODES);
    expect(new Set(ERROR_CODES)).toEqual(new Set(Object.values(ErrorCode)));
    expect(ERROR_CODES.length).toBe(Object.values(ErrorCode).length);
    const grpcNames = Object.keys(status).filter((n) => Number.isNaN(Number(n)) && n !== "OK");
    expect([...STATUS_CODES].sort()).toEqual(grpcNames.sort());
  });

  it("theProtocolTableListsEveryErrorCodeWithItsGrpcStatus: docs/protocol.md §10", () => {
    const doc = readFileSync(join(repo, "docs/protocol.md"), "utf8");
    const section = doc.slice(doc.indexOf("## §10 Status codes"), doc.indexOf("## §11"));
    const rows = new Map(
      [...section.matchAll(/^\| `([a-z_]+)` +\| ([A-Z_]+) +\|/gm)].map((m) => [m[1]!, m[2]!] as const),
    );
    for (const code of ERROR_CODES) expect(rows.get(code), code).toBe(ERROR_TABLE[code].grpc);
    expect([...rows.keys()].sort()).toEqual([...ERROR_CODES].sort());
  });

  it("aPeerCanMakeACodePreciseButNeverContradictItsStatus", () => {
    expect(errorCodeOfWire(status.ABORTED, "fenced")).toBe(ErrorCode.Fenced);
    expect(errorCodeOfWire(status.ABORTED, "session_busy")).toBe(ErrorCode.SessionBusy);
    expect(errorCodeOfWire(status.FAILED_PRECONDITION, "diverged")).toBe(ErrorCode.Diverged);
    expect(errorCodeOfWire(status.ABORTED, "not_found")).toBe(ErrorCode.Conflict);
    expect(errorCodeOfWire(status.NOT_FOUND, "no_such_code")).toBe(ErrorCode.NotFound);
    expect(errorCodeOfWire(status.NOT_FOUND, undefined)).toBe(ErrorCode.NotFound);
    expect(errorCodeOfWire(status.UNKNOWN, "internal")).toBe(ErrorCode.Internal);
    expect(errorCodeOfWire(99, "data_loss")).toBe(ErrorCode.Internal);
  });

  it("theHostNeverTakesAFinerCodeFromAPeerTheClientDoes", () => {
    // A harness node is a peer the host does not trust to pick a code; a host is the client's server.
    const trailers = new Metadata();
    trailers.set(ERROR_CODE_TRAILER, "session_busy");
    const fromPeer = rpcErrorOfStatus({ code: status.ABORTED, details: "busy", metadata: trailers });
    expect(fromPeer.code).toBe(ErrorCode.Conflict);
    expect({ code: clientError(fromPeer).code, status: clientError(fromPeer).status }).toEqual({
      code: ErrorCode.SessionBusy,
      status: "ABORTED",
    });
  });

  it("everyGrpcStatusIsReadBackAsExactlyOneCode", () => {
    const names = Object.keys(status).filter((n) => Number.isNaN(Number(n)) && n !== "OK") as GrpcStatusName[];
    for (const name of names) {
      const readers = Object.values(ERROR_TABLE).filter((row) => row.reads.includes(name));
      expect(readers.length, name).toBe(1);
      expect(readers[0]!.grpc === name || name === "OUT_OF_RANGE" || name === "UNKNOWN", name).toBe(true);
    }
  });

  it("codesSharingAGrpcStatusShareTheirConnectHttpAndExitMappings", () => {
    // A client (and so the CLI) sees only the status: codes it cannot tell apart must exit alike.
    for (const code of Object.values(ErrorCode)) {
      const row = ERROR_TABLE[code];
      expect(exitCodeOfStatus(row.grpc), code).toBe(row.exit);
      const read = ERROR_TABLE[errorCodeOfStatus(status[row.grpc])];
      expect({ connect: read.connect, http: read.http, exit: read.exit }, code).toEqual({
        connect: row.connect,
        http: row.http,
        exit: row.exit,
      });
    }
  });

  it("invalidArgumentIsAnInvalidArgumentHostError", () => {
    const err = invalidArgument("session: required");
    expect(err).toBeInstanceOf(HostError);
    expect(err.code).toBe(ErrorCode.InvalidArgument);
    expect(err.message).toBe("session: required");
  });

  it("srcErrorsLoadsNoTransportAtRuntime", () => {
    const dir = join(repo, "src/errors");
    const valueImports = readdirSync(dir)
      .filter((f) => f.endsWith(".ts"))
      .flatMap((f) =>
        [...readFileSync(join(dir, f), "utf8").matchAll(/^import\s+(?!type\s)[^;]*?from\s+"([^"]+)"/gm)]
          .map((m) => m[1]!)
          .filter((spec) => !spec.startsWith(".") && !spec.startsWith("node:"))
          .map((spec) => `${f}: ${spec}`),
      );
    expect(valueImports).toEqual([]);
  });
});
