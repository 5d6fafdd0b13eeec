// The server's token file read in one pass (docs/operations.md "Principals, roles and projects",
// "JWTs"): each line is a comment, a credential (principals.ts credentialOfLine) or the `jwt` line
// (jwt-config.ts), its key=value words parsed by the one parser (principals.ts keyValues).
// Invariants: a bad line fails the whole file with an error naming its line number, never its text
// (it may be a token); a principal named on several lines (a token being rotated: old and new side by
// side) has the same kind, roles and projects on each, so an actor's name means one set of rights; at
// most one `jwt` line; the same bare token twice is one credential (harmless in the old format, still so).
import { type JwtConfig, jwtConfigOf } from "./jwt-config.js";
import { credentialOfLine, keyValues, type Principal, type TokenEntry } from "./principals.js";

/** What a token file's text says: its credentials, its bare tokens (secrets to redact), its JWT line. */
export interface TokenFileText {
  readonly entries: readonly TokenEntry[];
  readonly secrets: readonly string[];
  readonly jwt: JwtConfig | undefined;
}

export function parseTokenFileText(text: string): TokenFileText {
  const entries: TokenEntry[] = [];
  const secrets: string[] = [];
  const named = new Map<string, { principal: Principal; line: number }>();
  let jwt: JwtConfig | undefined;
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) return;
    const where = `token file line ${i + 1}`;
    let entry: TokenEntry & { readonly secret?: string };
    try {
      if (/^jwt(\s|$)/.test(line)) {
        if (jwt !== undefined) throw new Error("only one jwt line is allowed");
        jwt = jwtConfigOf(keyValues(line.slice(3)));
        return;
      }
      entry = credentialOfLine(line);
    } catch (err) {
      throw new Error(`${where}: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (entry.secret !== undefined) {
      if (entries.some((e) => e.digest.equals(entry.digest))) return;
      secrets.push(entry.secret);
    }
    const first = named.get(entry.principal.name);
    if (first !== undefined && !sameRights(first.principal, entry.principal))
      throw new Error(
        `${where}: principal ${entry.principal.name} is named on line ${first.line} with other roles or projects (each of its tokens must grant the same)`,
      );
    if (first === undefined) named.set(entry.principal.name, { principal: entry.principal, line: i + 1 });
    entries.push({ digest: entry.digest, principal: first?.principal ?? entry.principal });
  });
  return { entries, secrets, jwt };
}

/** Whether two lines naming one principal grant it the same: kind, roles and projects. */
function sameRights(a: Principal, b: Principal): boolean {
  const set = (xs: Iterable<string>): string => [...new Set(xs)].sort().join(",");
  const projects = (p: Principal): string => (p.projects === "all" ? "*" : set(p.projects));
  return a.kind === b.kind && set(a.roles) === set(b.roles) && projects(a) === projects(b);
}
