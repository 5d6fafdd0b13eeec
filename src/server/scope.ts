// Projects as the boundary of what a principal lists and creates (docs/operations.md "Principals,
// roles and projects"; docs/protocol.md §19 item 2). A session named by uid is checked in one place,
// the placer's session lookup, with the caller's projects carried in its OpContext (request-id.ts
// opContext). Invariants: a list names only the caller's projects (an empty page for another one); a
// session is created only in one of the caller's projects; a caller without a principal (a host with
// no credentials) is unrestricted.
import { ErrorCode, HostError } from "../errors/index.js";
import type { Host } from "../host/host.js";
import { callerOf } from "./caller.js";
import { inProject } from "./principals.js";
import type { Metadata } from "@grpc/grpc-js";

type Ctx = { readonly metadata: Metadata };

/**
 * The project a list reads: the requested one ("" is the host's default, or the caller's first
 * project when the default is not one of its), and whether the caller may see it at all.
 */
export function listedProject(host: Host, requested: string, ctx: Ctx): { project: string; visible: boolean } {
  const who = callerOf(ctx);
  const project = requested || host.config.defaultProject;
  if (who === undefined || who.projects === "all") return { project: requested, visible: true };
  if (inProject(who, project)) return { project, visible: true };
  if (requested === "") {
    const [first] = [...who.projects].sort();
    if (first !== undefined) return { project: first, visible: true };
  }
  return { project, visible: false };
}

/** The project a new session goes into: the requested one (or the listed default); PERMISSION_DENIED outside the caller's. */
export function creatableProject(host: Host, requested: string, ctx: Ctx): string {
  const who = callerOf(ctx);
  if (who === undefined || who.projects === "all") return requested;
  const { project, visible } = listedProject(host, requested, ctx);
  if (!visible)
    throw new HostError(
      ErrorCode.PermissionDenied,
      `principal ${who.name} may not create sessions in project ${JSON.stringify(project)}`,
    );
  return project;
}
