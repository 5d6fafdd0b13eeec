// The shape of one conformance check and helpers every check shares. Invariant: a check either
// returns pass/skip with evidence or throws; the runner turns any throw into a fail with evidence.
import { ErrorCode, isHostError } from "../../errors/index.js";
import type { Host } from "../../host/host.js";
import type { SessionInfo } from "../../journal/types.js";
import type { SuiteEnv, Turn } from "../env.js";
import { divergence, errText, fail, short } from "../evidence.js";
import { SUBJECT } from "../target.js";
import type { Tier } from "../types.js";

export interface CheckOutcome {
  readonly status: "pass" | "skip";
  readonly evidence: string;
}

export interface Check {
  /** Stable id, `<tier>.<name>`. */
  readonly id: string;
  readonly tier: Tier;
  readonly title: string;
  run(env: SuiteEnv): Promise<CheckOutcome>;
}

export const pass = (evidence: string): CheckOutcome => ({ status: "pass", evidence });
export const skip = (evidence: string): CheckOutcome => ({ status: "skip", evidence });

/** Fails unless the subject's turn `i` output equals the control's; the evidence names the signature. */
export async function continuesLikeControl(env: SuiteEnv, i: number, got: string, who = ""): Promise<string> {
  const expected = await env.expected(i);
  if (got !== expected) fail(`${who}${divergence(i, expected, got, await env.signaturesFor(i))}`);
  return `${who}turn ${i} ${JSON.stringify(got)} = control`;
}

/** The set-up of most continuity checks: a new session of the subject on the shared host after N live turns. */
export async function sessionAfterTurns(env: SuiteEnv): Promise<{ host: Host; uid: string; turns: Turn[] }> {
  const host = await env.shared();
  const uid = await env.newSession(host);
  const turns = await env.drive(host, uid, env.range(env.turns));
  return { host, uid, turns };
}

/** Turn N+1 of the session continues like the control, and the chains of `sessions` verify: the evidence. */
export async function nextTurnContinues(
  env: SuiteEnv,
  host: Host,
  uid: string,
  sessions: readonly string[] = [uid],
): Promise<string> {
  const next = await env.turn(host, uid, env.turns + 1);
  const cont = await continuesLikeControl(env, env.turns + 1, next.text);
  return `${cont}; ${await env.verifyChains(host, sessions)}`;
}

/** Forks `parent` at `atSeq` (0 = head) into one child of the subject per uid. */
export function forkSubject(
  env: SuiteEnv,
  host: Host,
  parent: string,
  atSeq: number,
  uids: readonly string[],
): Promise<{ children: SessionInfo[]; atSeq: number }> {
  return host.placer.fork({
    parent,
    atSeq,
    children: uids.map((uid) => ({ uid, project: "default", harness: SUBJECT })),
    signal: env.signal(),
  });
}

/** The session's head and every content hash, to prove an operation left the journal alone. */
export interface JournalState {
  readonly head: number;
  readonly hashes: readonly string[];
  readonly fence: number;
}

export async function journalState(host: Host, uid: string): Promise<JournalState> {
  const records = await host.journal.readRange(uid);
  return {
    head: records.at(-1)?.seq ?? 0,
    hashes: records.map((r) => r.contentHash),
    fence: await host.journal.currentFence(uid),
  };
}

/** Fails if the journal changed between two states; otherwise describes it. */
export function unchanged(
  what: string,
  before: JournalState,
  after: JournalState,
  opts: { fence?: boolean } = {},
): string {
  if (after.head !== before.head) fail(`${what} changed the journal: head ${before.head}→${after.head}`);
  const idx = before.hashes.findIndex((h, k) => after.hashes[k] !== h);
  if (idx >= 0)
    fail(
      `${what} changed the journal: content hash at seq ${idx + 1} ${short(before.hashes[idx]!)}→${short(after.hashes[idx] ?? "")}`,
    );
  if (opts.fence === true && after.fence !== before.fence)
    fail(`${what} minted a fence: ${before.fence}→${after.fence}`);
  return `journal head ${before.head}→${after.head}, hashes unchanged${opts.fence === true ? `, fence ${before.fence}→${after.fence}` : ""}`;
}

/** Runs `op` expecting a HostError with `code`; fails with evidence otherwise. Returns the message. */
export async function expectRefusal(
  what: string,
  code: ErrorCode | readonly ErrorCode[],
  op: () => Promise<unknown>,
): Promise<string> {
  const codes: readonly ErrorCode[] = typeof code === "string" ? [code] : code;
  try {
    await op();
  } catch (err) {
    if (isHostError(err) && codes.includes(err.code)) return `${err.code}: ${err.message}`;
    fail(`${what} failed, but not with ${codes.join(" or ")}: ${errText(err)}`);
  }
  return fail(`${what} was accepted (want a ${codes.join(" or ")} refusal)`);
}

export { ErrorCode };
