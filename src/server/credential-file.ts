// The server's token file on disk: read, and read again when it changes or on SIGHUP. Invariants: a
// reload that fails (unreadable file, a bad line, a JWT key file that does not parse) keeps the
// credentials in force and logs one error naming the line number, never a line's text; a reload that
// succeeds replaces every credential at once; nothing is fetched from the network (JWT keys come
// from files the token file names).
import { readFileSync, unwatchFile, watchFile } from "node:fs";
import { registerSecret } from "../errors/index.js";
import type { BearerAuth, Credentials } from "./auth.js";
import type { ServerLogger } from "./call-policy.js";
import { jwtVerifierOf } from "./jwt-config.js";
import { parseTokenFileText } from "./token-file.js";

/** How often the token file (and the JWT key files it names) are checked for a change, ms. */
export const CREDENTIAL_POLL_MS = 1_000;

/** A token file as loaded: its credentials and the JWT key files it names (watched with it). */
export interface LoadedCredentials {
  readonly credentials: Credentials;
  readonly keyFiles: readonly string[];
}

/** The credentials `path` names now, its text parsed once (throws with the line number on a bad line). */
export function loadCredentials(path: string): LoadedCredentials {
  const { entries, secrets, jwt: jwtConfig } = parseTokenFileText(readFileSync(path, "utf8"));
  for (const s of secrets) registerSecret(s);
  const jwt = jwtConfig === undefined ? undefined : jwtVerifierOf(jwtConfig);
  if (entries.length === 0 && jwt === undefined) throw new Error(`token file ${path} names no credential`);
  return { credentials: { entries, ...(jwt ? { jwt } : {}) }, keyFiles: jwtConfig?.keyFile ? [jwtConfig.keyFile] : [] };
}

/** Re-reads `path` into `auth` when it or a key file changes, and on SIGHUP; stop() ends both. */
export function watchCredentials(
  path: string,
  auth: BearerAuth,
  logger: ServerLogger,
  keyFiles: readonly string[],
  pollMs = CREDENTIAL_POLL_MS,
): { reload(): boolean; stop(): void } {
  let watched: string[] = [];
  const reload = (): boolean => {
    try {
      const { credentials, keyFiles: now } = loadCredentials(path);
      auth.replace(credentials);
      watch(now);
      logger.info(
        { credentials: credentials.entries.length, jwt: credentials.jwt !== undefined },
        "token file reloaded",
      );
      return true;
    } catch (err) {
      logger.error(
        { err: err instanceof Error ? err.message : String(err) },
        "token file reload failed; the credentials in force are kept",
      );
      return false;
    }
  };
  const onChange = (cur: { mtimeMs: number }, prev: { mtimeMs: number }): void => {
    if (cur.mtimeMs !== prev.mtimeMs) reload();
  };
  const watch = (keys: readonly string[]): void => {
    for (const f of watched) unwatchFile(f, onChange);
    watched = [path, ...keys];
    for (const f of watched) watchFile(f, { interval: pollMs, persistent: false }, onChange);
  };
  watch(keyFiles);
  const onHup = (): void => {
    reload();
  };
  process.on("SIGHUP", onHup);
  return {
    reload,
    stop() {
      process.off("SIGHUP", onHup);
      for (const f of watched) unwatchFile(f, onChange);
      watched = [];
    },
  };
}
