// The one error table (docs/protocol.md §10). Invariants: every ErrorCode maps to the gRPC status grpc-js
// itself numbers that way, and back to a code of the same status; src/errors loads no transport at
// runtime (type imports only), so any layer — and the CLI's --help — can throw a HostError for free.
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { status } from "@grpc/grpc-js";
import { describe, expect, it } from "vitest";
import {
  ErrorCode,
  errorCodeOfStatus,
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
