// Strict validation of a HarnessSpec for RegisterHarness (wire contract §9 step 3–6). Invariants: a
// spec is accepted only when it has exactly one placement, a required resumability, no unknown fields
// or enum numbers, and a canonical form of at most 4096 bytes; the digest is computed over that same
// canonical form, so identical specs always get identical digests.
import { existsSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import type { Message } from "@bufbuild/protobuf";
import { ErrorCode, HostError, invalidArgument as invalid } from "../errors/index.js";
import { canonicalProto, protoDigest } from "../canon/index.js";
import { Resumability } from "../gen/agentsessions/v1/harness_pb.js";
import { HarnessSpecSchema, type HarnessSpec } from "../gen/agentsessions/v1/harness_registry_pb.js";
import { MANIFEST } from "../vm/manifest-name.js";
import { parseAddress } from "../wire/index.js";

/** RFC 1123 DNS label: what a registration name must be. */
export const HARNESS_NAME = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
export const MAX_CANONICAL_SPEC_BYTES = 4096;

export interface CheckedSpec {
  readonly spec: HarnessSpec;
  /** JCS of the spec's proto3-JSON: what the journal stores. */
  readonly canonical: string;
  /** "sha256:<hex>" of `canonical`. */
  readonly digest: string;
}

export function checkName(name: string): string {
  if (name === "") throw invalid("name is required");
  if (!HARNESS_NAME.test(name)) throw invalid(`name ${JSON.stringify(name)} is not an RFC 1123 DNS label`);
  return name;
}

/** Shape checks (INVALID_ARGUMENT) and the canonical form + digest. */
export function checkSpec(spec: HarnessSpec | undefined): CheckedSpec {
  if (spec === undefined) throw invalid("spec is required");
  noUnknownFields(spec, "spec");
  noUnknownFields(spec.capabilities, "spec.capabilities");
  switch (spec.placement.case) {
    case "remote":
      noUnknownFields(spec.placement.value, "spec.remote");
      if (spec.placement.value.address.trim() === "") throw invalid("spec.remote.address is required");
      break;
    case "substrate":
      noUnknownFields(spec.placement.value, "spec.substrate");
      if (spec.placement.value.atespace === "" || spec.placement.value.template === "") {
        throw invalid("spec.substrate needs both atespace and template");
      }
      break;
    case undefined:
      throw invalid("spec needs exactly one placement (remote or substrate)");
    default: {
      const exhaustive: never = spec.placement;
      throw invalid(`unknown placement ${String(exhaustive)}`);
    }
  }
  const resumability = spec.capabilities?.resumability ?? Resumability.UNSPECIFIED;
  knownEnum(resumability, Resumability, "spec.capabilities.resumability");
  if (resumability === Resumability.UNSPECIFIED) throw invalid("spec.capabilities.resumability is required");
  const canonical = canonicalProto(HarnessSpecSchema, spec);
  const size = Buffer.byteLength(canonical, "utf8");
  if (size > MAX_CANONICAL_SPEC_BYTES)
    throw invalid(`spec is ${size} bytes in canonical form; the limit is ${MAX_CANONICAL_SPEC_BYTES}`);
  return { spec, canonical, digest: protoDigest(HarnessSpecSchema, spec) };
}

/** The one substrate this host serves: `substrate { atespace: "vm", template: IMAGE_DIR }` (docs/runtimes.md). */
export const VM_ATESPACE = "vm";

/** Where a registered spec runs on this host: a node address (remote) or a vm image (vm). */
export interface ServablePlacement {
  readonly runtime: "remote" | "vm";
  readonly target: string;
}

/** Whether this host can serve the placement (FAILED_PRECONDITION otherwise); where it runs. */
export function servablePlacement(spec: HarnessSpec): ServablePlacement {
  switch (spec.placement.case) {
    case "remote": {
      const address = spec.placement.value.address.trim();
      try {
        parseAddress(address);
      } catch (err) {
        throw new HostError(ErrorCode.FailedPrecondition, err instanceof Error ? err.message : String(err), {
          cause: err,
        });
      }
      return { runtime: "remote", target: address };
    }
    case "substrate": {
      const { atespace, template } = spec.placement.value;
      if (atespace !== VM_ATESPACE)
        throw new HostError(
          ErrorCode.FailedPrecondition,
          `substrate atespace ${JSON.stringify(atespace)} is not served here: this host's only substrate is "${VM_ATESPACE}" (template: a vm image directory)`,
        );
      if (!isAbsolute(template) || !existsSync(join(template, MANIFEST)))
        throw new HostError(
          ErrorCode.FailedPrecondition,
          `substrate template ${JSON.stringify(template)} is not a vm image on this host (an absolute path to a directory made by \`harnesshost image build\`)`,
        );
      return { runtime: "vm", target: template };
    }
    case undefined:
      throw invalid("spec needs exactly one placement (remote or substrate)");
    default: {
      const exhaustive: never = spec.placement;
      throw invalid(`unknown placement ${String(exhaustive)}`);
    }
  }
}

/** Refuses fields this host does not know (protobuf-es keeps them in $unknown on decode). */
function noUnknownFields(msg: Message | undefined, path: string): void {
  if (msg === undefined) return;
  const unknown = (msg as { $unknown?: readonly unknown[] }).$unknown;
  if (unknown !== undefined && unknown.length > 0) throw invalid(`${path} carries unknown fields`);
}

/** Refuses an enum number outside the declared members (open proto3 enums keep unknown numbers). */
function knownEnum(value: number, members: object, field: string): void {
  if (!Object.values(members).includes(value)) throw invalid(`${field} has unknown value ${value}`);
}
