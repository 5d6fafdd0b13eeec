// agentsessions.v1.HarnessRegistry on its own (operator) listener (wire contract §5, §9). Invariant:
// the service is a thin translation over HarnessCatalog — every rule about names, specs, immutability
// and servability lives there, so the RPCs and the start-up load agree.
import { create } from "@bufbuild/protobuf";
import {
  ListHarnessesResponseSchema,
  RegisterHarnessResponseSchema,
  type HarnessRegistry,
} from "../gen/agentsessions/v1/harness_registry_pb.js";
import type { MethodsOf, ServiceImpl } from "../wire/index.js";
import type { HarnessCatalog } from "../host/harness-catalog.js";

export type RegistryMethods = MethodsOf<typeof HarnessRegistry>;

export function registryService(catalog: HarnessCatalog): ServiceImpl<RegistryMethods> {
  return {
    async registerHarness(req) {
      const { harness, outcome } = await catalog.register(req.name, req.spec);
      return create(RegisterHarnessResponseSchema, { harness, outcome });
    },
    async getHarness(req, ctx) {
      return catalog.get(req.name, req.observe, ctx.signal);
    },
    async listHarnesses(req) {
      const page = await catalog.list(req.pageSize, req.pageToken, req.includeRetired);
      return create(ListHarnessesResponseSchema, page);
    },
    async retireHarness(req) {
      return catalog.retire(req.name, req.reason);
    },
    async freeHarness(req) {
      return catalog.free(req.name);
    },
  };
}
