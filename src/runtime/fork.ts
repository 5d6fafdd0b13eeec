// The one fork every runtime uses (docs/protocol.md §7.3): a child actor is the parent's checkpoint
// restored under the child's uid when the ref names a memory blob, else a fresh actor of the child.
// Invariant: no runtime forks any other way, so a child always starts from exactly the state the
// Placer chose (the one checkpoint every child of a memory fork shares); a child needs its own uid.
import { ErrorCode, HostError } from "../errors/index.js";
import type { ForkOptions, Incarnation, Runtime, SnapshotRef } from "./types.js";

export async function forkActor(
  runtime: Pick<Runtime, "name" | "create" | "restore">,
  ref: SnapshotRef,
  opts: ForkOptions,
): Promise<Incarnation> {
  if (!opts.childSessionUid)
    throw new HostError(ErrorCode.InvalidArgument, `${runtime.name}: fork requires a child session uid`);
  const spec = {
    sessionUid: opts.childSessionUid,
    harnessName: opts.harnessName,
    ...(opts.log !== undefined ? { log: opts.log } : {}),
  };
  return ref.memory ? runtime.restore(ref, spec) : runtime.create(spec);
}
