// Identifier minting. Invariant: ids have the reference's shapes — execution and call ids are 16
// lowercase hex, session uids "sess-" + 24 lowercase hex — and come from a CSPRNG.
import { randomFillSync } from "node:crypto";

/** CSPRNG bytes are drawn a pool at a time (as `crypto.randomUUID` does): one `randomFillSync` per
 * 4 KiB instead of one per id, which was ~1.5 % of the host's CPU on an echo turn. Each byte is used once. */
const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let poolOffset = POOL_BYTES;

/** `byteCount` fresh CSPRNG bytes as lowercase hex (2 × byteCount characters); byteCount ≤ 4096. */
export function randomHex(byteCount: number): string {
  if (!Number.isInteger(byteCount) || byteCount < 1 || byteCount > POOL_BYTES)
    throw new RangeError(`randomHex: byteCount ${byteCount} is outside 1..${POOL_BYTES}`);
  if (poolOffset + byteCount > POOL_BYTES) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  const hex = pool.toString("hex", poolOffset, poolOffset + byteCount);
  poolOffset += byteCount;
  return hex;
}

export function newExecutionId(): string {
  return randomHex(8);
}

export function newCallId(): string {
  return randomHex(8);
}

export function newSessionUid(): string {
  return `sess-${randomHex(12)}`;
}

const SESSION_UID = /^sess-[0-9a-f]{24}$/;

export function isSessionUid(uid: string): boolean {
  return SESSION_UID.test(uid);
}
