// Bearer-token authentication (docs/protocol.md §15; docs/operations.md "Tokens"). Invariants: tokens are compared in constant time over
// equal-length digests, never with ===, and every configured token is checked (no early exit) so the
// time taken does not reveal which token matched; the presented token is never logged or echoed.
import { createHash, timingSafeEqual } from "node:crypto";
import { status as GrpcStatus, type Metadata } from "@grpc/grpc-js";
import { registerSecret } from "../errors/index.js";

export interface AuthRefusal {
  readonly code: GrpcStatus.UNAUTHENTICATED | GrpcStatus.PERMISSION_DENIED;
  readonly details: string;
}

function digest(token: string): Buffer {
  return createHash("sha256").update(token, "utf8").digest();
}

export class BearerAuth {
  private readonly digests: readonly Buffer[];

  constructor(tokens: readonly string[]) {
    if (tokens.length === 0 || tokens.some((t) => t === ""))
      throw new Error("bearer auth needs at least one non-empty token");
    this.digests = tokens.map(digest);
    for (const t of tokens) registerSecret(t);
  }

  /** undefined when the call may proceed. */
  check(metadata: Metadata): AuthRefusal | undefined {
    const [header] = metadata.get("authorization");
    return this.checkHeader(typeof header === "string" ? header : undefined);
  }

  /** The same decision from a raw `authorization` header value (the HTTP listener's path). */
  checkHeader(header: string | null | undefined): AuthRefusal | undefined {
    if (typeof header !== "string" || header === "") {
      return { code: GrpcStatus.UNAUTHENTICATED, details: "missing bearer token (authorization: Bearer <token>)" };
    }
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match?.[1])
      return { code: GrpcStatus.UNAUTHENTICATED, details: "malformed authorization header; expected Bearer <token>" };
    const presented = digest(match[1]);
    let ok = false;
    for (const d of this.digests) ok = timingSafeEqual(presented, d) || ok;
    return ok ? undefined : { code: GrpcStatus.PERMISSION_DENIED, details: "invalid bearer token" };
  }
}

export { parseTokenFile } from "../wire/token-file.js";
