// The server's token file read in one pass (docs/operations.md "Principals, roles and projects",
// "JWTs"): each line is a comment, a credential (principals.ts credentialOfLine) or the `jwt` line
// (jwt-config.ts), its key=value words parsed by the one parser (principals.ts keyValues).
// Invariants: a bad line fails the whole file with an error naming its line number, never its text
// (it may be a token); principal names are unique, so an actor names exactly one credential; at most
// one `jwt` line; the same bare token twice is one credential (harmless in the old format, still so).
import { type JwtConfig, jwtConfigOf } from "./jwt-config.js";
import { credentialOfLine, keyValues, type TokenEntry } from "./principals.js";

/** What a token file's text says: its credentials, its bare tokens (secrets to redact), its JWT line. */
export interface TokenFileText {
  readonly entries: readonly TokenEntry[];
  readonly secrets: readonly string[];
  readonly jwt: JwtConfig | undefined;
}

export function parseTokenFileText(text: string): TokenFileText {
  const entries: TokenEntry[] = [];
  const secrets: string[] = [];
  const names = new Set<string>();
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
    if (names.has(entry.principal.name)) throw new Error(`${where}: principal ${entry.principal.name} is named twice`);
    names.add(entry.principal.name);
    entries.push({ digest: entry.digest, principal: entry.principal });
  });
  return { entries, secrets, jwt };
}
