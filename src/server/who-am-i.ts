// Console.WhoAmI: the caller as this host authenticated it (docs/protocol.md §19), so a client (the
// console) can show who it acts as and offer only what its roles allow. Invariants: the answer is the
// principal the call policy bound to the call — never anything the client sent — and names no
// credential; a host without credentials answers `authenticated: false` (every permission, every
// project), since it verifies no one.
import { create } from "@bufbuild/protobuf";
import { type WhoAmIResponse, WhoAmIResponseSchema } from "../gen/harnesshost/v1/console_pb.js";
import { PERMISSIONS } from "./permissions.js";
import type { Principal } from "./principals.js";

export function whoAmIOf(who: Principal | undefined): WhoAmIResponse {
  if (who === undefined)
    return create(WhoAmIResponseSchema, {
      authenticated: false,
      allProjects: true,
      permissions: [...PERMISSIONS].sort(),
    });
  return create(WhoAmIResponseSchema, {
    authenticated: true,
    principal: who.name,
    kind: who.kind,
    via: who.via,
    roles: [...who.roles],
    allProjects: who.projects === "all",
    projects: who.projects === "all" ? [] : [...who.projects].sort(),
    permissions: [...who.permissions].sort(),
  });
}
