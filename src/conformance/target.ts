// What a conformance target is and how the suite's host serves it. Invariant: a built-in name or a
// module path is always driven through a host-spawned node (over gRPC), an address through the remote
// runtime, `vm:IMAGE` through the vm runtime (a guest per session); the same target on the filesystem-only `local` runtime exists only where it can be loaded
// in-process (never for an address).
import { isAbsolute, resolve } from "node:path";
import { builtinHarnesses } from "../../harnesses/index.js";
import type { HarnessSpecFlag } from "../host/config.js";
import { ErrorCode, HostError } from "../errors/index.js";
import { didYouMean } from "../errors/suggest.js";
import { parseAddress } from "../wire/index.js";

export type TargetKind = "builtin" | "module" | "address" | "vm";

export interface Target {
  readonly kind: TargetKind;
  /** As the runtime takes it: a built-in name, an absolute module path, an address, or an image directory. */
  readonly value: string;
}

/** The registry names the suite's hosts serve the harness under. */
export const SUBJECT = "subject";
export const SUBJECT_LOCAL = "subject-local";

/** `vm:IMAGE` names a vm harness image (`harnesshost image build`), served on the vm runtime. */
export const VM_PREFIX = "vm:";

export function classifyTarget(raw: string): Target {
  if (raw.startsWith(VM_PREFIX) && raw.length > VM_PREFIX.length) {
    const image = raw.slice(VM_PREFIX.length);
    return { kind: "vm", value: isAbsolute(image) ? image : resolve(image) };
  }
  if (Object.hasOwn(builtinHarnesses, raw)) return { kind: "builtin", value: raw };
  if (/\.(m?[jt]s)$/.test(raw)) return { kind: "module", value: isAbsolute(raw) ? raw : resolve(raw) };
  if (!raw.includes(":")) {
    const names = Object.keys(builtinHarnesses);
    throw new HostError(
      ErrorCode.InvalidArgument,
      `no built-in harness ${raw}${didYouMean(raw, names)} (built-ins: ${names.join(", ")}; or give a module path ending in .js/.mjs/.ts, a node address host:port or unix:///path, or vm:IMAGE)`,
    );
  }
  parseAddress(raw); // InvalidArgument for anything that is neither
  return { kind: "address", value: raw };
}

/** The harness specs a suite host is configured with. */
export function subjectSpecs(target: Target): HarnessSpecFlag[] {
  const base = { checkpointPolicy: "every-turn", descriptorId: "" } as const;
  switch (target.kind) {
    case "builtin":
    case "module":
      return [
        { ...base, name: SUBJECT, runtime: "spawned", target: target.value },
        { ...base, name: SUBJECT_LOCAL, runtime: "local", target: target.value },
      ];
    case "address":
      return [{ ...base, name: SUBJECT, runtime: "remote", target: target.value }];
    case "vm":
      return [{ ...base, name: SUBJECT, runtime: "vm", target: target.value }];
  }
}
