// How a failure of a Harness.Connect stream itself is reported. Invariant: the caller's cancel stays
// the caller's (CANCELLED / DEADLINE_EXCEEDED); a frame above the host's receive limit is
// RESOURCE_EXHAUSTED naming eventBytes, one above the node's is RESOURCE_EXHAUSTED saying the node
// refused what the host sent; a node's deliberate refusal keeps its status (ABORTED as a busy
// session); anything else is a lost node — INTERNAL, the turn left resumable.
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
    // The same grpc-js words come from either end: our receive limit is eventBytes; any other limit is
    // the node refusing what the host sent (a Start whose history it cannot take in one frame).
    if (oversized !== undefined && oversized.limit === eventBytes)
      return overLimit("eventBytes", eventBytes, oversized.size, `an event from harness node at ${address}`);
    if (oversized !== undefined)
      return new HostError(
        ErrorCode.ResourceExhausted,
        `harness node at ${address} refused a frame of ${oversized.size} bytes from the host (its receive limit is ${oversized.limit} bytes): the turn's Start carries more history than the node accepts in one message, and the node does not take history uploads (docs/protocol.md §8.10)`,
        { cause: err },
      );
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

/** grpc-js's refusal of a frame above a receive limit: "… larger than max (N vs. M)", either end's. */
function oversizedFrame(err: RpcError): { size: number; limit: number } | undefined {
  if (err.grpcCode !== GrpcStatus.RESOURCE_EXHAUSTED) return undefined;
  const m = /larger than max \((\d+) vs\.? (\d+)\)/.exec(err.details);
  return m ? { size: Number(m[1]), limit: Number(m[2]) } : undefined;
}
