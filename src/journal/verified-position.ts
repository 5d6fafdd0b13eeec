// The integrity digest of a stored verified position (docs/protocol.md §5.9). Invariant: the digest
// binds the session, the seq, the head hash and every byte of the projection, so a row copied to another
// session, moved to another seq or with a damaged projection no longer matches and is refused; it is a
// check against accidents and stale rows, not a signature (whoever can rewrite the row can recompute it:
// `verify` and the host's distrust option walk the whole chain instead).
import { createHash } from "node:crypto";

export function verifiedPositionDigest(session: string, seq: number, hash: string, projection: Uint8Array): string {
  const h = createHash("sha256");
  h.update(`harnesshost.verified-position.v1\u0000${session}\u0000${seq}\u0000${hash}\u0000`);
  h.update(projection);
  return `sha256:${h.digest("hex")}`;
}
