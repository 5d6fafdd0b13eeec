// harnesshost.v1.SessionVersions (Sessions port) and harnesshost.v1.HarnessVersions (operator
// listener): thin translations over Placer.upgrade and HarnessCatalog (docs/versioning.md). Invariant:
// every rule about versions, pins and upgrades lives in the placer, the registry and the catalog; these
// handlers only validate shapes and map results.
import { create } from "@bufbuild/protobuf";
import {
  HarnessVersionSchema,
  ListVersionsResponseSchema,
  UpgradeResponseSchema,
  type HarnessVersions,
  type SessionVersions,
} from "../gen/harnesshost/v1/versions_pb.js";
import { ErrorCode, HostError } from "../errors/index.js";
import type { Host } from "../host/host.js";
import { versionKey } from "../placement/registry.js";
import type { MethodsOf, ServiceImpl } from "../wire/index.js";
import { invalid } from "./checks.js";
import { opContext } from "./request-id.js";
import type { HarnessCatalog, HarnessVersionInfo } from "../host/harness-catalog.js";

export function sessionVersionsService(host: Host): ServiceImpl<MethodsOf<typeof SessionVersions>> {
  return {
    async upgrade(req, ctx) {
      if (req.session === "") throw invalid("session is required");
      if (req.toVersion === "") throw invalid("to_version is required");
      const r = await host.placer.upgrade(req.session, req.toVersion, ctx.signal, opContext(ctx));
      return create(UpgradeResponseSchema, {
        fromVersion: r.from,
        toVersion: r.to,
        upgradeSeq: BigInt(r.upgradeSeq),
        replayedTurns: BigInt(r.replayedTurns),
        snapshot: r.snapshot,
      });
    },
  };
}

function versionProto(v: HarnessVersionInfo) {
  return create(HarnessVersionSchema, {
    ...v,
    pinnedSessions: [...v.pinnedSessions],
    pinnedDigests: [...v.pinnedDigests],
  });
}

export function harnessVersionsService(catalog: HarnessCatalog): ServiceImpl<MethodsOf<typeof HarnessVersions>> {
  return {
    async listVersions(req) {
      return create(ListVersionsResponseSchema, { versions: (await catalog.versions(req.name)).map(versionProto) });
    },
    async retireVersion(req) {
      if (req.name === "") throw invalid("name is required");
      if (req.version === "") throw invalid("version is required (RetireHarness retires a whole name)");
      const key = versionKey(req.name, req.version);
      await catalog.retire(key, req.reason, req.force);
      const found = (await catalog.versions(req.name)).find((v) => v.version === req.version);
      if (!found) throw new HostError(ErrorCode.NotFound, `harness "${key}" not found`);
      return versionProto(found);
    },
  };
}
