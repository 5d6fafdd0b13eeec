// Per-copy randomness for harness authors (docs/runtimes.md, "Clock and randomness after a restore or
// fork"). Invariant: every value is drawn from the kernel (/dev/urandom) at the moment of the call —
// nothing is pooled, cached or seeded in the process — so two copies of one snapshot (fork children;
// restores of a memory actor or of a vm guest, whose kernel RNG the host reseeds first) never draw the
// same values, on any runtime. Node's own generators keep state in RAM that such copies share
// (OpenSSL's DRBG behind crypto.randomBytes, randomUUID's pre-fetched pool, V8's Math.random), so they
// repeat across copies unless the runtime replaces them (a vm image's reseed hook does, in the harness
// process).
import { openSync, readSync } from "node:fs";

/** The kernel's random device, opened on first use; a descriptor survives a whole-VM snapshot. */
let device: number | undefined;

/** `n` bytes read from the kernel now. */
export function freshRandomBytes(n: number): Buffer {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`freshRandomBytes: ${n} is not a byte count`);
  const out = Buffer.alloc(n);
  device ??= openSync("/dev/urandom", "r");
  let filled = 0;
  while (filled < n) filled += readSync(device, out, filled, n - filled, null);
  return out;
}

/** A version-4 UUID from 16 fresh kernel bytes (the form crypto.randomUUID returns). */
export function freshRandomUUID(): string {
  const b = freshRandomBytes(16);
  b[6] = ((b[6] ?? 0) & 0x0f) | 0x40;
  b[8] = ((b[8] ?? 0) & 0x3f) | 0x80;
  const hex = b.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A float in [0, 1) from 53 fresh kernel bits (where Math.random would be used). */
export function freshRandom(): number {
  const b = freshRandomBytes(8);
  return Number(b.readBigUInt64BE() >> 11n) / 2 ** 53;
}
