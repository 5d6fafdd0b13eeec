// The JWT section of the server's token file: one `jwt key=value…` line naming the key file, the
// issuer and audience a token must carry, and which claims name the principal, its roles and its
// projects. Invariants: a JWT is accepted only when the line names an issuer, an audience and a key
// file; the key file is read from disk (a JWKS document, or a shared HMAC secret), never fetched.
import { readFileSync } from "node:fs";
import { z } from "zod";
import type { JwtVerifier } from "./auth.js";
import { type JwtConfig, type JwtKeys, keysFromFile } from "./jwt.js";

export type { JwtConfig };

const lineSchema = z
  .object({
    jwks: z.string().min(1).optional(),
    "secret-file": z.string().min(1).optional(),
    issuer: z.string().min(1, "issuer= is required"),
    audience: z.string().min(1, "audience= is required"),
    "principal-claim": z.string().min(1).default("sub"),
    "roles-claim": z.string().min(1).default("roles"),
    "projects-claim": z.string().min(1).default("projects"),
    "leeway-seconds": z.coerce.number().int().min(0).max(300).default(30),
  })
  .strict();

/** The JWT configuration of a token file's `jwt` line, from its key=value words (principals.ts keyValues). */
export function jwtConfigOf(fields: Record<string, string>): JwtConfig {
  const parsed = lineSchema.safeParse(fields);
  if (!parsed.success)
    throw new Error(parsed.error.issues.map((x) => `${x.path.join(".") || "jwt"}: ${x.message}`).join("; "));
  const f = parsed.data;
  if ((f.jwks === undefined) === (f["secret-file"] === undefined))
    throw new Error("name exactly one of jwks=FILE or secret-file=FILE");
  return {
    keyFile: f.jwks ?? f["secret-file"] ?? "",
    keyKind: f.jwks !== undefined ? "jwks" : "secret",
    issuer: f.issuer,
    audience: f.audience,
    principalClaim: f["principal-claim"],
    rolesClaim: f["roles-claim"],
    projectsClaim: f["projects-claim"],
    leewaySeconds: f["leeway-seconds"],
  };
}

/** The verifier a `jwt` line configures, its keys read now. */
export function jwtVerifierOf(config: JwtConfig, now: () => number = Date.now): JwtVerifier {
  const keys: JwtKeys = keysFromFile(config.keyKind, readFileSync(config.keyFile));
  return keys.verifier(config, now);
}
