// Principals and the server's token file (docs/operations.md "Principals, roles and projects").
// Invariants: a named line stores only a token's SHA-256 digest, never the token; a bare line (the
// old one-token-per-line file) stays valid and names an admin in every project; a malformed line
// fails the whole file with an error naming its line number and never its text (it may be a token);
// principal names are unique, so a decision's actor names exactly one credential.
import * as crypto from "node:crypto";
import { z } from "zod";
import { type Permission, permissionsOfRoles, REGISTRAR_PERMISSIONS, ROLES, type Role } from "./permissions.js";

/** An authenticated caller: who it is, what it may do, and where. */
export interface Principal {
  readonly name: string;
  /** `user` (roles and projects) or `registrar` (the registry only, no session permission). */
  readonly kind: "user" | "registrar";
  readonly roles: readonly Role[];
  readonly permissions: ReadonlySet<Permission>;
  /** "all", or the only projects the principal may see and act in. */
  readonly projects: "all" | ReadonlySet<string>;
  /** How it was verified: `token` (the token file) or `jwt`. */
  readonly via: "token" | "jwt";
}

/** One credential of the token file: the digest it is presented as, and whom it names. */
export interface TokenEntry {
  readonly digest: Buffer;
  readonly principal: Principal;
}

export function tokenDigest(token: string): Buffer {
  return crypto.createHash("sha256").update(token, "utf8").digest();
}

/** Node's one-shot digest (20.12+; no Hash object per call), when this Node has it. */
const oneShot: ((algorithm: string, data: string) => string) | undefined = (
  crypto as { hash?: (algorithm: string, data: string) => string }
).hash;

/** tokenDigest as lowercase hex: what every call's bearer is looked up by (auth.ts), made once per call. */
export function tokenDigestHex(token: string): string {
  return oneShot !== undefined
    ? oneShot("sha256", token)
    : crypto.createHash("sha256").update(token, "utf8").digest("hex");
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._@:+-]{0,127}$/;
const DIGEST_LINE = /^sha256:([0-9a-f]{64})(?:\s+(.*))?$/;

const namedSchema = z
  .object({
    principal: z.string().regex(NAME, "principal= must be 1-128 of A-Z a-z 0-9 . _ @ : + -").optional(),
    registrar: z.string().regex(NAME, "registrar= must be 1-128 of A-Z a-z 0-9 . _ @ : + -").optional(),
    roles: z.string().optional(),
    projects: z.string().optional(),
  })
  .strict();

export function principalOf(
  name: string,
  roles: readonly Role[],
  projects: "all" | readonly string[],
  via: Principal["via"],
): Principal {
  return {
    name,
    kind: "user",
    roles,
    permissions: permissionsOfRoles(roles),
    projects: projects === "all" ? "all" : new Set(projects),
    via,
  };
}

function registrarOf(name: string): Principal {
  return {
    name,
    kind: "registrar",
    roles: [],
    permissions: new Set(REGISTRAR_PERMISSIONS),
    projects: new Set(),
    via: "token",
  };
}

/** Roles from `a,b`: each a known role, at least one. */
export function parseRoles(text: string): Role[] {
  const words = text
    .split(",")
    .map((w) => w.trim())
    .filter((w) => w !== "");
  if (words.length === 0) throw new Error(`roles= names no role (roles are ${ROLES.join(", ")})`);
  return words.map((w) => {
    const role = ROLES.find((r) => r === w);
    if (role === undefined) throw new Error(`unknown role ${JSON.stringify(w)} (roles are ${ROLES.join(", ")})`);
    return role;
  });
}

/** Projects from `a,b` or `*` (every project). */
export function parseProjects(text: string): "all" | string[] {
  const words = text
    .split(",")
    .map((w) => w.trim())
    .filter((w) => w !== "");
  if (words.includes("*")) return "all";
  if (words.length === 0) throw new Error("projects= names no project (use * for every project)");
  return words;
}

/**
 * The `key=value` words of a token file line (after its first word): the one parser of both the named
 * credential lines and the `jwt` line. Throws on a word without `=` or a key given twice.
 */
export function keyValues(rest: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const word of rest.split(/\s+/).filter((w) => w !== "")) {
    const eq = word.indexOf("=");
    if (eq <= 0) throw new Error(`expected key=value, got a word without "="`);
    const key = word.slice(0, eq);
    if (key in fields) throw new Error(`${key}= given twice`);
    fields[key] = word.slice(eq + 1);
  }
  return fields;
}

function namedEntry(hex: string, rest: string): TokenEntry {
  const fields = keyValues(rest);
  const parsed = namedSchema.safeParse(fields);
  if (!parsed.success)
    throw new Error(parsed.error.issues.map((i) => `${i.path.join(".") || "line"}: ${i.message}`).join("; "));
  const f = parsed.data;
  const digest = Buffer.from(hex, "hex");
  if (f.registrar !== undefined) {
    if (f.principal !== undefined || f.roles !== undefined || f.projects !== undefined)
      throw new Error("a registrar= line takes no principal=, roles= or projects= (it may only use the registry)");
    return { digest, principal: registrarOf(f.registrar) };
  }
  if (f.principal === undefined) throw new Error("a sha256: line needs principal=NAME (or registrar=NAME)");
  if (f.roles === undefined) throw new Error(`principal ${f.principal} needs roles= (${ROLES.join(", ")})`);
  const roles = parseRoles(f.roles);
  const projects = parseProjects(f.projects ?? "*");
  return { digest, principal: principalOf(f.principal, roles, projects, "token") };
}

/** The name a bare (unnamed) token line's principal gets: its digest's first 8 hex digits, never the token. */
export function legacyName(digest: Buffer): string {
  return `token:${digest.toString("hex").slice(0, 8)}`;
}

/**
 * The credential one line of the server token file names (not blank, not a comment, not `jwt`):
 * `sha256:<hex> principal=NAME roles=R[,R] [projects=P[,P]|*]` or `sha256:<hex> registrar=NAME`; any
 * other line is a bare token (admin in every project, the file format before principals), returned
 * with it as `secret`. Throws without quoting the line.
 */
export function credentialOfLine(line: string): TokenEntry & { readonly secret?: string } {
  const named = DIGEST_LINE.exec(line);
  if (named?.[1] !== undefined) return namedEntry(named[1], named[2] ?? "");
  if (line.startsWith("sha256:")) throw new Error("sha256: must be followed by 64 lowercase hex digits");
  if (/\s/.test(line)) throw new Error("a bare token line holds one token without spaces");
  const digest = tokenDigest(line);
  return { digest, principal: principalOf(legacyName(digest), ["admin"], "all", "token"), secret: line };
}

/** Whom a token file line names: a principal with roles and projects, or a registrar. */
export type LineHolder =
  | { readonly principal: string; readonly roles: string; readonly projects?: string }
  | { readonly registrar: string };

/**
 * The server token file line of `token` (docs/operations.md "Principals, roles and projects"):
 * `sha256:<hex>`, then whom it names when `holder` is given. The line is checked as the server would
 * read it (an unknown role or a bad name throws, without the token); the token itself is never part of it.
 */
export function tokenFileLine(token: string, holder?: LineHolder): string {
  if (token === "" || /\s/.test(token)) throw new Error("a token is one word: no spaces, tabs or newlines, not empty");
  const digest = `sha256:${tokenDigest(token).toString("hex")}`;
  if (holder === undefined) return digest;
  const words =
    "registrar" in holder
      ? [`registrar=${holder.registrar}`]
      : [
          `principal=${holder.principal}`,
          `roles=${holder.roles}`,
          ...(holder.projects !== undefined ? [`projects=${holder.projects}`] : []),
        ];
  const line = [digest, ...words].join(" ");
  credentialOfLine(line);
  return line;
}

/** May `p` see and act in `project`? */
export function inProject(p: Principal, project: string): boolean {
  return p.projects === "all" || p.projects.has(project);
}
