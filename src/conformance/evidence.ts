// Evidence text for check results. Invariant: a failed check always says what was expected, what was
// observed and (where the suite recognises it) which known signature the difference matches.
import { ErrorCode, HostError, isHostError } from "../errors/index.js";

/** Thrown by a check to fail with the given evidence (ErrorCode.CheckFailed in the one table). */
export class CheckFailure extends HostError {
  override readonly name = "CheckFailure";
  constructor(readonly evidence: string) {
    super(ErrorCode.CheckFailed, evidence);
  }
}

export function fail(evidence: string): never {
  throw new CheckFailure(evidence);
}

/** A turn's outputs as one comparable string. */
export function turnText(outputs: readonly string[]): string {
  return outputs.length === 1 ? outputs[0]! : JSON.stringify(outputs);
}

export function q(text: string): string {
  const s = JSON.stringify(text);
  return s.length > 120 ? `${s.slice(0, 117)}…"` : s;
}

export function short(hash: string): string {
  return hash.replace(/^sha256:/, "").slice(0, 12);
}

/** An error as evidence: `<code>: <message>` for host errors. */
export function errText(err: unknown): string {
  if (isHostError(err)) return `${err.code}: ${err.message}`;
  if (err instanceof Error) return err.message;
  return String(err);
}

/** What the suite knows a wrong continuation looks like, computed from twins driven without interruption. */
export interface Signatures {
  /** The output a fresh instance gives for the same input (state lost). */
  readonly coldBoot: string;
  /** The output after the prior turns were applied twice (history replayed into restored state). */
  readonly doubleApplied: string;
}

/** Evidence for a continuation that differs from the control. */
export function divergence(turn: number, expected: string, got: string, sig: Signatures | undefined): string {
  const head = `turn ${turn}: expected ${q(expected)} (control) got ${q(got)}`;
  if (sig === undefined) return head;
  if (got === sig.coldBoot)
    return `${head}: cold boot — the harness lost its RAM state (a fresh instance answers ${q(sig.coldBoot)})`;
  if (got === sig.doubleApplied)
    return `${head}: double-applied history — the ${turn - 1} prior turns were applied again on top of the restored state`;
  return `${head}: diverged from the control (neither a cold boot ${q(sig.coldBoot)} nor a double-applied history ${q(sig.doubleApplied)})`;
}
