// The server's token file on disk: read, and read again when it changes or on SIGHUP. Invariants: a
// reload that fails (unreadable file, a bad line, a JWT key file that does not parse) keeps the
// credentials in force and logs one error naming the line number, never a line's text; a reload that
// succeeds replaces every credential at once; a change is noticed by what the files hold, not by their
// timestamps (a rewrite within one tick of the file system's clock, or with its mtime put back, is
// still a change); nothing is fetched from the network (JWT keys come from files the token file names).
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { registerSecret } from "../errors/index.js";
import type { BearerAuth, Credentials } from "./auth.js";
import type { ServerLogger } from "./call-policy.js";
import { jwtVerifierOf } from "./jwt-config.js";
import { parseTokenFileText } from "./token-file.js";

/**
 * How often the token file (and the JWT key files it names) are read to see whether they changed, ms.
 * Default 1,000: a rotation is in force within a second, and reading a few small files once a second
 * costs nothing measurable. 0 turns the polling off (SIGHUP still reloads).
 */
export const CREDENTIAL_POLL_MS = 1_000;

/** What `files` hold now, as one digest (a missing or unreadable file counts as its error code). */
function contentDigest(files: readonly string[]): string {
  const h = createHash("sha256");
  for (const f of files) {
    try {
      h.update(readFileSync(f));
    } catch (err) {
      h.update(`unreadable:${(err as NodeJS.ErrnoException).code ?? "?"}`);
    }
    h.update("\0");
  }
  return h.digest("hex");
}

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
  let watched: readonly string[] = [path, ...keyFiles];
  // What the files held when they were last read for a reload (successful or not): a poll reloads
  // only when that changed, so a file that does not parse is reported once, not every poll.
  let seen = contentDigest(watched);
  const reload = (): boolean => {
    seen = contentDigest(watched);
    try {
      const { credentials, keyFiles: now } = loadCredentials(path);
      auth.replace(credentials);
      const next = [path, ...now];
      if (next.join("\0") !== watched.join("\0")) {
        watched = next;
        seen = contentDigest(watched);
      }
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
  const poll =
    pollMs > 0
      ? setInterval(() => {
          if (contentDigest(watched) !== seen) reload();
        }, pollMs)
      : undefined;
  poll?.unref();
  const onHup = (): void => {
    reload();
  };
  process.on("SIGHUP", onHup);
  return {
    reload,
    stop() {
      process.off("SIGHUP", onHup);
      if (poll) clearInterval(poll);
    },
  };
}
