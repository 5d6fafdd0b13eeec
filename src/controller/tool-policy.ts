// The operator's tool policy (docs/operations.md, "Tools that run without approval"): which tools the host may run for a harness without
// an operator's approval. Invariant: the policy is the host's configuration, never a harness's claim —
// a CONTROLLER_MEDIATED call of a tool the policy does not list is refused PERMISSION_DENIED before
// anything is recorded or run, so no harness (in process or on a node) can make the host execute a
// tool unattended that the operator gates. REQUIRES_APPROVAL calls are always allowed: they park.
import type { ToolCall } from "../gen/agentsessions/v1/common_pb.js";
import { Mediation } from "../gen/agentsessions/v1/common_pb.js";
import { ErrorCode, HostError } from "../errors/index.js";

export interface ToolPolicy {
  /** Tools the host runs for a CONTROLLER_MEDIATED call without approval; every other tool needs one. */
  readonly withoutApproval: ReadonlySet<string>;
}

export function toolPolicy(withoutApproval: Iterable<string>): ToolPolicy {
  return { withoutApproval: new Set(withoutApproval) };
}

/** Refuses (PERMISSION_DENIED) a call that would run a tool unattended against the policy. */
export function checkToolPolicy(policy: ToolPolicy | undefined, call: ToolCall): void {
  if (policy === undefined || call.mediation !== Mediation.CONTROLLER_MEDIATED) return;
  if (policy.withoutApproval.has(call.tool)) return;
  throw new HostError(
    ErrorCode.PermissionDenied,
    `tool ${JSON.stringify(call.tool.slice(0, 128))} needs an operator's approval on this host, but the harness called it CONTROLLER_MEDIATED; call it with REQUIRES_APPROVAL, or let it run unattended with serve --tool-without-approval (docs/operations.md)`,
  );
}
