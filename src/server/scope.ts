// Projects as the boundary of what a principal sees (docs/operations.md "Principals, roles and
// projects"). Invariants: a session outside the caller's projects answers exactly as a session that
// does not exist (NOT_FOUND, the host's own words), so its existence does not leak; a list names only
// the caller's projects (an empty page for another one); a session is created only in one of the
// caller's projects; a caller without a principal (a host with no credentials) is unrestricted.
import { ErrorCode, HostError } from "../errors/index.js";
import type { Host } from "../host/host.js";
import type { SessionInfo } from "../journal/types.js";
import type { ExecScope } from "./exec-stream.js";
import { callerOf } from "./caller.js";
import { inProject } from "./principals.js";
import type { Metadata } from "@grpc/grpc-js";

type Ctx = { readonly metadata: Metadata };

function notFound(uid: string): HostError {
  return new HostError(ErrorCode.NotFound, `session ${uid} not found`);
}

/** The session, when it exists and lies in the caller's projects; NOT_FOUND otherwise. */
export async function visibleSession(host: Host, uid: string, ctx: Ctx): Promise<SessionInfo> {
  const info = await host.getSession(uid);
  const who = callerOf(ctx);
  if (who !== undefined && !inProject(who, info.project)) throw notFound(uid);
  return info;
}

/** Checks the session is visible to the caller, reading it only when the caller is project-scoped. */
export async function requireVisible(host: Host, uid: string, ctx: Ctx): Promise<void> {
  const who = callerOf(ctx);
  if (who === undefined || who.projects === "all") return;
  await visibleSession(host, uid, ctx);
}

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

/** The scope of an Exec: new sessions go into the caller's project, existing ones must be visible. */
export function execScope(host: Host, ctx: Ctx): ExecScope {
  const who = callerOf(ctx);
  if (who === undefined || who.projects === "all") return { project: "", admit: () => undefined };
  return {
    get project() {
      return creatableProject(host, "", ctx);
    },
    admit(info) {
      if (!inProject(who, info.project)) throw notFound(info.uid);
    },
  };
}
