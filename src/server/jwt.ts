// JWT bearer verification with Node's crypto (RFC 7519, RFC 7515 compact form): RS256/RS384/RS512,
// PS256, ES256/ES384 against a JWKS file, HS256 against a shared secret. Invariants: the algorithm is
// the key's, never the token's choice (a token naming another algorithm than its key's, or `none`, is
// refused); a token is accepted only with a valid signature, the configured issuer, the configured
// audience among its `aud`, an `exp` in the future and any `nbf` in the past (both within the
// leeway); claims become a principal only through the configured claim names; every refusal is
// UNAUTHENTICATED with a reason that never quotes the token. A verifier remembers the tokens it
// accepted (by digest, bounded) until their exp, so a client's repeated calls cost one verification.
import {
  constants,
  createHash,
  createHmac,
  createPublicKey,
  type KeyObject,
  timingSafeEqual,
  verify,
} from "node:crypto";
import { status as GrpcStatus } from "@grpc/grpc-js";
import { z } from "zod";
import { registerSecret } from "../errors/index.js";
import type { AuthRefusal, JwtVerifier } from "./auth.js";
import { type Principal, parseProjects, parseRoles, principalOf } from "./principals.js";

export interface JwtConfig {
  /** A JWKS JSON file (`jwks=`) or a file holding a shared HMAC secret (`secret-file=`). */
  readonly keyFile: string;
  readonly keyKind: "jwks" | "secret";
  readonly issuer: string;
  readonly audience: string;
  readonly principalClaim: string;
  readonly rolesClaim: string;
  readonly projectsClaim: string;
  /** Clock skew allowed on exp and nbf, seconds. */
  readonly leewaySeconds: number;
}

type Alg = "RS256" | "RS384" | "RS512" | "PS256" | "ES256" | "ES384" | "HS256";

interface VerifyKey {
  readonly kid: string | undefined;
  readonly alg: Alg;
  check(data: Buffer, signature: Buffer): boolean;
}

const HASH_OF: Record<Alg, string> = {
  RS256: "sha256",
  RS384: "sha384",
  RS512: "sha512",
  PS256: "sha256",
  ES256: "sha256",
  ES384: "sha384",
  HS256: "sha256",
};

const jwkSchema = z
  .object({
    kty: z.string(),
    kid: z.string().optional(),
    alg: z.string().optional(),
    use: z.string().optional(),
    crv: z.string().optional(),
  })
  .passthrough();
const jwksSchema = z.object({ keys: z.array(jwkSchema).min(1, "a JWKS needs at least one key") });

function algOfJwk(jwk: z.infer<typeof jwkSchema>): Alg {
  if (jwk.alg !== undefined) {
    if (jwk.alg in HASH_OF && jwk.alg !== "HS256") return jwk.alg as Alg;
    throw new Error(`JWKS key ${jwk.kid ?? "(no kid)"}: unsupported alg ${jwk.alg}`);
  }
  if (jwk.kty === "RSA") return "RS256";
  if (jwk.kty === "EC" && jwk.crv === "P-256") return "ES256";
  if (jwk.kty === "EC" && jwk.crv === "P-384") return "ES384";
  throw new Error(`JWKS key ${jwk.kid ?? "(no kid)"}: cannot tell its algorithm (give alg)`);
}

function publicKey(jwk: z.infer<typeof jwkSchema>): VerifyKey {
  const alg = algOfJwk(jwk);
  const key: KeyObject = createPublicKey({ key: jwk as never, format: "jwk" });
  const hash = HASH_OF[alg];
  const options = alg.startsWith("ES")
    ? { key, dsaEncoding: "ieee-p1363" as const }
    : alg === "PS256"
      ? { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 }
      : { key };
  return { kid: jwk.kid, alg, check: (data, sig) => verify(hash, data, options, sig) };
}

/** The verification keys of a key file. */
export class JwtKeys {
  constructor(private readonly keys: readonly VerifyKey[]) {}

  /** The key a token's header names: by kid, or the only key when the token names none. */
  find(kid: string | undefined): VerifyKey | undefined {
    if (kid === undefined) return this.keys.length === 1 ? this.keys[0] : undefined;
    return this.keys.find((k) => k.kid === kid);
  }

  /** A verifier of tokens signed by these keys, remembering each accepted token until its exp. */
  verifier(config: JwtConfig, now: () => number, cacheSize = JWT_CACHE_TOKENS): JwtVerifier {
    const accepted = new AcceptedTokens(cacheSize);
    return {
      verify: (token) => {
        const at = now();
        const known = accepted.get(token, at);
        if (known !== undefined) return known;
        const result = verifyJwtClaims(token, this, config, at);
        if (!isRefused(result)) accepted.add(token, result.principal, (result.exp + config.leewaySeconds) * 1000);
        return isRefused(result) ? result : result.principal;
      },
    };
  }
}

/** Keys from a file's bytes: a JWKS document, or a shared secret (trailing newline dropped). */
export function keysFromFile(kind: "jwks" | "secret", bytes: Buffer): JwtKeys {
  if (kind === "secret") {
    const secret = bytes.toString("utf8").replace(/\r?\n$/, "");
    if (Buffer.byteLength(secret) < 32) throw new Error("the JWT shared secret must be at least 32 bytes");
    registerSecret(secret);
    const mac = Buffer.from(secret, "utf8");
    return new JwtKeys([
      {
        kid: undefined,
        alg: "HS256",
        check: (data, sig) => {
          const want = createHmac("sha256", mac).update(data).digest();
          return sig.length === want.length && timingSafeEqual(sig, want);
        },
      },
    ]);
  }
  const parsed = jwksSchema.safeParse(JSON.parse(bytes.toString("utf8")));
  if (!parsed.success) throw new Error(`JWKS: ${parsed.error.issues.map((i) => i.message).join("; ")}`);
  return new JwtKeys(parsed.data.keys.filter((k) => k.use === undefined || k.use === "sig").map(publicKey));
}

const headerSchema = z.object({ alg: z.string(), kid: z.string().optional(), typ: z.string().optional() });
const stringOrList = z.union([z.string(), z.array(z.string())]);
const payloadSchema = z
  .object({
    iss: z.string().optional(),
    aud: stringOrList.optional(),
    exp: z.number().optional(),
    nbf: z.number().optional(),
  })
  .passthrough();

function refuse(reason: string): AuthRefusal {
  return { code: GrpcStatus.UNAUTHENTICATED, details: `JWT refused: ${reason}` };
}

function json(part: string): unknown {
  try {
    return JSON.parse(Buffer.from(part, "base64url").toString("utf8"));
  } catch {
    return undefined;
  }
}

function words(claim: unknown): string | undefined {
  if (typeof claim === "string") return claim.replace(/\s+/g, ",");
  if (Array.isArray(claim) && claim.every((c) => typeof c === "string")) return claim.join(",");
  return undefined;
}

/** Accepted tokens remembered by one verifier (its keys and configuration; a reload makes a new one). */
export const JWT_CACHE_TOKENS = 1024;

function isRefused(x: Verified | AuthRefusal): x is AuthRefusal {
  return "code" in x;
}

/**
 * Tokens a verifier accepted, by their SHA-256 (never the token itself), each until its `exp` (plus the
 * leeway): a token seen again is not re-verified — its signature, issuer and audience cannot have
 * changed — but is refused again, re-verified, once it has expired. At most `capacity` are kept (the
 * oldest goes first).
 */
class AcceptedTokens {
  private readonly byDigest = new Map<string, { principal: Principal; untilMs: number }>();

  constructor(private readonly capacity: number) {}

  get(token: string, nowMs: number): Principal | undefined {
    if (this.capacity === 0) return undefined;
    const key = digestOf(token);
    const hit = this.byDigest.get(key);
    if (hit === undefined) return undefined;
    if (hit.untilMs > nowMs) return hit.principal;
    this.byDigest.delete(key);
    return undefined;
  }

  add(token: string, principal: Principal, untilMs: number): void {
    if (this.capacity === 0) return;
    if (this.byDigest.size >= this.capacity) {
      const oldest = this.byDigest.keys().next().value;
      if (oldest !== undefined) this.byDigest.delete(oldest);
    }
    this.byDigest.set(digestOf(token), { principal, untilMs });
  }
}

function digestOf(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("base64");
}

/** An accepted token: its principal and its `exp` (seconds). */
interface Verified {
  readonly principal: Principal;
  readonly exp: number;
}

/** The principal a JWT proves, or why it is refused (verifyJwtClaims without its exp). */
export function verifyJwt(token: string, keys: JwtKeys, config: JwtConfig, nowMs: number): Principal | AuthRefusal {
  const result = verifyJwtClaims(token, keys, config, nowMs);
  return isRefused(result) ? result : result.principal;
}

function verifyJwtClaims(token: string, keys: JwtKeys, config: JwtConfig, nowMs: number): Verified | AuthRefusal {
  const [h = "", p = "", s = ""] = token.split(".");
  const header = headerSchema.safeParse(json(h));
  if (!header.success) return refuse("malformed header");
  const key = keys.find(header.data.kid);
  if (key === undefined) return refuse(header.data.kid === undefined ? "no kid and several keys" : "unknown key id");
  if (header.data.alg !== key.alg) return refuse(`algorithm ${header.data.alg} is not the key's (${key.alg})`);
  if (!key.check(Buffer.from(`${h}.${p}`, "ascii"), Buffer.from(s, "base64url"))) return refuse("bad signature");
  const claims = payloadSchema.safeParse(json(p));
  if (!claims.success) return refuse("malformed claims");
  const c = claims.data;
  const now = nowMs / 1000;
  if (c.iss !== config.issuer) return refuse("wrong issuer");
  const aud = c.aud === undefined ? [] : typeof c.aud === "string" ? [c.aud] : c.aud;
  if (!aud.includes(config.audience)) return refuse("wrong audience");
  if (c.exp === undefined) return refuse("no exp");
  if (c.exp + config.leewaySeconds <= now) return refuse("expired");
  if (c.nbf !== undefined && c.nbf - config.leewaySeconds > now) return refuse("not yet valid");
  const name = c[config.principalClaim];
  if (typeof name !== "string" || !/^[A-Za-z0-9][A-Za-z0-9._@:+-]{0,127}$/.test(name))
    return refuse(`claim ${config.principalClaim} is not a principal name`);
  const roleText = words(c[config.rolesClaim]);
  const projectText = words(c[config.projectsClaim]);
  if (roleText === undefined) return refuse(`claim ${config.rolesClaim} names no roles`);
  if (projectText === undefined) return refuse(`claim ${config.projectsClaim} names no projects`);
  try {
    return { principal: principalOf(name, parseRoles(roleText), parseProjects(projectText), "jwt"), exp: c.exp };
  } catch (err) {
    return refuse(err instanceof Error ? err.message : "bad claims");
  }
}
