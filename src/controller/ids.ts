// Identifier minting. Invariant: ids have the reference's shapes — execution and call ids are 16
// lowercase hex, session uids "sess-" + 24 lowercase hex — and come from a CSPRNG.
import { randomBytes } from "node:crypto";

export function newExecutionId(): string {
  return randomBytes(8).toString("hex");
}

export function newCallId(): string {
  return randomBytes(8).toString("hex");
}

export function newSessionUid(): string {
  return `sess-${randomBytes(12).toString("hex")}`;
}

const SESSION_UID = /^sess-[0-9a-f]{24}$/;

export function isSessionUid(uid: string): boolean {
  return SESSION_UID.test(uid);
}
