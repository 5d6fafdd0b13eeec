// The error a Cancel aborts a running turn with (docs/protocol.md §17.1 rule 2). Invariant: it is
// CANCELLED and names the reason; when the host verified who asked for the Cancel, it names them too,
// and the turn's ERROR{CANCELLED} record carries that actor (§19) — whatever the harness made of its
// aborted signal.
import { ErrorCode, HostError } from "../errors/index.js";
import type { IdentityRef } from "../gen/agentsessions/v1/common_pb.js";

export class TurnCancelled extends HostError {
  override readonly name = "TurnCancelled";
  constructor(
    reason: string,
    /** Who asked for the Cancel (absent on a host without credentials, or from another host). */
    readonly by?: IdentityRef,
  ) {
    super(ErrorCode.Cancelled, reason === "" ? "turn cancelled by Cancel" : `turn cancelled by Cancel: ${reason}`);
  }
}
