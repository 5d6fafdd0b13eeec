// How a failure of a Harness.Connect stream itself is reported. Invariant: the caller's cancel stays
// the caller's (CANCELLED / DEADLINE_EXCEEDED); a frame above the receive limit is RESOURCE_EXHAUSTED
// naming eventBytes; a node's deliberate refusal keeps its status (ABORTED as a busy session); anything
// else is a lost node — INTERNAL, the turn left resumable.
import { status as GrpcStatus } from "@grpc/grpc-js";
import { ErrorCode, HostError } from "../errors/index.js";
import { overLimit } from "../limits/index.js";
import { RpcError, abortError } from "../wire/index.js";

/** Statuses a node sends on purpose (the turn never started); anything else means the node was lost. */
const DELIBERATE_STATUSES: ReadonlySet<number> = new Set([
  GrpcStatus.INVALID_ARGUMENT,
  GrpcStatus.NOT_FOUND,
  GrpcStatus.ALREADY_EXISTS,
  GrpcStatus.FAILED_PRECONDITION,
  GrpcStatus.ABORTED,
  GrpcStatus.UNIMPLEMENTED,
  GrpcStatus.PERMISSION_DENIED,
  GrpcStatus.UNAUTHENTICATED,
]);

/** A failure of the stream itself: the caller's cancel, a refusal by the node, or a lost node. */
export function streamLoss(err: unknown, signal: AbortSignal, eventBytes: number, address: string): HostError {
  if (signal.aborted) return abortError(signal);
  if (err instanceof RpcError) {
    const oversized = oversizedFrame(err);
    if (oversized !== undefined)
      return overLimit("eventBytes", eventBytes, oversized, `an event from harness node at ${address}`);
    if (err.grpcCode === GrpcStatus.ABORTED)
      return new HostError(ErrorCode.SessionBusy, `harness node refused the turn: ${err.details}`, { cause: err });
    if (DELIBERATE_STATUSES.has(err.grpcCode)) return err;
    return new HostError(ErrorCode.Internal, `harness lost mid-turn: ${err.details}`, { cause: err });
  }
  if (err instanceof HostError) return err;
  return new HostError(
    ErrorCode.Internal,
    `harness lost mid-turn: ${err instanceof Error ? err.message : String(err)}`,
    {
      cause: err,
    },
  );
}

/** grpc-js's refusal of a frame above the channel's receive limit: "… larger than max (N vs. M)". */
function oversizedFrame(err: RpcError): number | undefined {
  if (err.grpcCode !== GrpcStatus.RESOURCE_EXHAUSTED) return undefined;
  const m = /larger than max \((\d+) vs\.? (\d+)\)/.exec(err.details);
  return m ? Number(m[1]) : undefined;
}
