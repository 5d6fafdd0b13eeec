// Bearer authentication and authorization (docs/protocol.md §15; docs/operations.md "Tokens",
// "Principals, roles and projects"). Invariants: a presented token is never compared itself — its
// SHA-256 digest is looked up among the configured digests (one Map lookup, however many lines the
// file has), so the only comparison made is digest against digest, and its time can depend only on
// the digest of what was presented, which a caller cannot steer toward a configured one (that would
// take a SHA-256 preimage search): it tells nothing of which tokens exist; the presented token is
// never logged or echoed; a refusal names the missing permission, never the credential; the
// credentials in force (and their index) are swapped whole on a reload, so a call sees the old set or
// the new one, never a mix.
import { status as GrpcStatus, type Metadata } from "@grpc/grpc-js";
import { registerSecret } from "../errors/index.js";
import type { Permission } from "./permissions.js";
import { legacyName, type Principal, principalOf, type TokenEntry, tokenDigest, tokenDigestHex } from "./principals.js";

export interface AuthRefusal {
  readonly code: GrpcStatus.UNAUTHENTICATED | GrpcStatus.PERMISSION_DENIED;
  readonly details: string;
  /** The permission the caller lacked (a refusal of an authenticated caller), for the refusal metric. */
  readonly permission?: Permission;
}

/** Verifies a JWT bearer (jwt.ts); undefined when the host takes no JWTs. */
export interface JwtVerifier {
  verify(token: string): Principal | AuthRefusal;
}

/** What the token file (and its JWT section) currently says. */
export interface Credentials {
  readonly entries: readonly TokenEntry[];
  readonly jwt?: JwtVerifier;
}

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

export function isRefusal(x: Principal | AuthRefusal): x is AuthRefusal {
  return "code" in x;
}

/** A credential set with its principals indexed by digest (lowercase hex), put in force together. */
interface InForce {
  readonly credentials: Credentials;
  readonly byDigest: ReadonlyMap<string, Principal>;
}

function inForce(credentials: Credentials): InForce {
  return { credentials, byDigest: new Map(credentials.entries.map((e) => [e.digest.toString("hex"), e.principal])) };
}

export class BearerAuth {
  private current: InForce;

  /** From a credential set, or from bare tokens (each an admin in every project). */
  constructor(from: Credentials | readonly string[]) {
    this.current = inForce(Array.isArray(from) ? credentialsOfTokens(from) : (from as Credentials));
    this.check = this.check.bind(this);
  }

  /** Puts a freshly read credential set in force (a token file reload). */
  replace(credentials: Credentials): void {
    if (credentials.entries.length === 0 && credentials.jwt === undefined)
      throw new Error("the token file names no credential");
    this.current = inForce(credentials);
  }

  /** undefined when the call may proceed (any valid credential: the /metrics scrape's rule). */
  check(metadata: Metadata): AuthRefusal | undefined {
    const [header] = metadata.get("authorization");
    return this.checkHeader(typeof header === "string" ? header : undefined);
  }

  /** The same decision from a raw `authorization` header value. */
  checkHeader(header: string | null | undefined): AuthRefusal | undefined {
    const who = this.authenticate(header);
    return isRefusal(who) ? who : undefined;
  }

  /** The principal a raw `authorization` header proves, or why not. */
  authenticate(header: string | null | undefined): Principal | AuthRefusal {
    if (typeof header !== "string" || header === "") {
      return { code: GrpcStatus.UNAUTHENTICATED, details: "missing bearer token (authorization: Bearer <token>)" };
    }
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match?.[1])
      return { code: GrpcStatus.UNAUTHENTICATED, details: "malformed authorization header; expected Bearer <token>" };
    const token = match[1];
    const { credentials, byDigest } = this.current;
    if (credentials.jwt !== undefined && JWT_SHAPE.test(token)) return credentials.jwt.verify(token);
    return (
      byDigest.get(tokenDigestHex(token)) ?? { code: GrpcStatus.PERMISSION_DENIED, details: "invalid bearer token" }
    );
  }

  /** The principal, or the refusal of a call needing `permission` (undefined: no such method in the table). */
  authorize(
    header: string | null | undefined,
    permission: Permission | undefined,
    path: string,
  ): Principal | AuthRefusal {
    const who = this.authenticate(header);
    if (isRefusal(who)) return who;
    if (permission === undefined)
      return { code: GrpcStatus.PERMISSION_DENIED, details: `${path} is in no permission table; refused` };
    if (!who.permissions.has(permission))
      return {
        code: GrpcStatus.PERMISSION_DENIED,
        details: `principal ${who.name} lacks permission ${permission} (needed by ${path})`,
        permission,
      };
    return who;
  }
}

/** Bare tokens as credentials: each an admin in every project (the file format before principals). */
export function credentialsOfTokens(tokens: readonly string[]): Credentials {
  if (tokens.length === 0 || tokens.some((t) => t === ""))
    throw new Error("bearer auth needs at least one non-empty token");
  for (const t of tokens) registerSecret(t);
  return {
    entries: tokens.map((t) => {
      const digest = tokenDigest(t);
      return { digest, principal: principalOf(legacyName(digest), ["admin"], "all", "token") };
    }),
  };
}

export { parseTokenFile } from "../wire/token-file.js";
