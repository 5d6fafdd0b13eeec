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

/** The `jwt` line of a token file, or undefined when there is none. */
export function parseJwtLines(text: string): JwtConfig | undefined {
  let found: JwtConfig | undefined;
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (!/^jwt(\s|$)/.test(line)) return;
    const where = `token file line ${i + 1}`;
    if (found !== undefined) throw new Error(`${where}: only one jwt line is allowed`);
    const fields: Record<string, string> = {};
    for (const word of line
      .slice(3)
      .split(/\s+/)
      .filter((w) => w !== "")) {
      const eq = word.indexOf("=");
      if (eq <= 0) throw new Error(`${where}: expected key=value`);
      fields[word.slice(0, eq)] = word.slice(eq + 1);
    }
    const parsed = lineSchema.safeParse(fields);
    if (!parsed.success)
      throw new Error(
        `${where}: ${parsed.error.issues.map((x) => `${x.path.join(".") || "jwt"}: ${x.message}`).join("; ")}`,
      );
    const f = parsed.data;
    if ((f.jwks === undefined) === (f["secret-file"] === undefined))
      throw new Error(`${where}: name exactly one of jwks=FILE or secret-file=FILE`);
    found = {
      keyFile: f.jwks ?? f["secret-file"] ?? "",
      keyKind: f.jwks !== undefined ? "jwks" : "secret",
      issuer: f.issuer,
      audience: f.audience,
      principalClaim: f["principal-claim"],
      rolesClaim: f["roles-claim"],
      projectsClaim: f["projects-claim"],
      leewaySeconds: f["leeway-seconds"],
    };
  });
  return found;
}

/** The verifier a `jwt` line configures, its keys read now. */
export function jwtVerifierOf(config: JwtConfig, now: () => number = Date.now): JwtVerifier {
  const keys: JwtKeys = keysFromFile(config.keyKind, readFileSync(config.keyFile));
  return keys.verifier(config, now);
}
