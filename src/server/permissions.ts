// Who may call what: the one permission table both transports enforce (gRPC's call policy and the
// HTTP listener's). Invariants: every method either listener serves has exactly one permission here
// (a method missing from the table is refused, never let through — test/server/permissions.test.ts
// checks every served method is listed); a role is a fixed set of permissions; a registrar credential
// holds only the registry's permissions, never a session one. docs/operations.md "Principals, roles
// and projects" is this table in words.

/** What every role may do: see sessions and harnesses, and who it is. */
const READ = ["session.read", "harness.read", "api.reflect", "self.read"] as const;
/** What running agents takes. */
const RUN = [
  "session.create",
  "session.exec",
  "session.resume",
  "session.suspend",
  "session.fork",
  "session.cancel",
] as const;
/** What cannot be undone, or changes the code a session runs. */
const ADMINISTER = ["session.delete", "session.upgrade", "harness.register", "harness.retire", "harness.free"] as const;

/** One thing a caller may be allowed to do; refusals name it. */
export const PERMISSIONS = [...READ, ...RUN, "session.decide", ...ADMINISTER] as const;
export type Permission = (typeof PERMISSIONS)[number];

export const ROLES = ["reader", "operator", "approver", "admin"] as const;
export type Role = (typeof ROLES)[number];

/**
 * What each role grants. Reader sees; operator runs turns (and sees); approver decides waits (and
 * sees) but cannot run a turn — so the one who runs an agent is not, by that alone, the one who lets
 * its gated calls through; admin may do everything, including what cannot be undone (delete, free)
 * and what changes the code a session runs (upgrade, register, retire).
 */
export const ROLE_PERMISSIONS: Readonly<Record<Role, readonly Permission[]>> = {
  reader: READ,
  operator: [...READ, ...RUN],
  approver: [...READ, "session.decide"],
  admin: PERMISSIONS,
};

/** What a registrar credential (a harness node's or a deploy job's) may do: the registry only. */
export const REGISTRAR_PERMISSIONS: readonly Permission[] = [
  "harness.read",
  "harness.register",
  "harness.retire",
  "api.reflect",
  "self.read",
];

/** The permission each served method needs, by its path's `service/Method`. */
export const METHOD_PERMISSIONS: Readonly<Record<string, Permission>> = {
  "agentsessions.v1.Sessions/CreateSession": "session.create",
  "agentsessions.v1.Sessions/GetSession": "session.read",
  "agentsessions.v1.Sessions/ListSessions": "session.read",
  "agentsessions.v1.Sessions/DeleteSession": "session.delete",
  "agentsessions.v1.Sessions/Exec": "session.exec",
  "agentsessions.v1.Sessions/Replay": "session.read",
  "agentsessions.v1.Sessions/Approve": "session.decide",
  "agentsessions.v1.Sessions/Cancel": "session.cancel",
  "agentsessions.v1.Sessions/Suspend": "session.suspend",
  "agentsessions.v1.Sessions/Resume": "session.resume",
  "agentsessions.v1.Sessions/Fork": "session.fork",
  "harnesshost.v1.Console/InspectSession": "session.read",
  "harnesshost.v1.Console/ListWaiting": "session.read",
  "harnesshost.v1.Console/ExportSession": "session.read",
  "harnesshost.v1.Console/ListSessions": "session.read",
  "harnesshost.v1.Console/ListHarnessOrigins": "harness.read",
  "harnesshost.v1.Console/WhoAmI": "self.read",
  "harnesshost.v1.SessionVersions/Upgrade": "session.upgrade",
  "harnesshost.v1.Turns/Exec": "session.exec",
  "agentsessions.v1.HarnessRegistry/RegisterHarness": "harness.register",
  "agentsessions.v1.HarnessRegistry/GetHarness": "harness.read",
  "agentsessions.v1.HarnessRegistry/ListHarnesses": "harness.read",
  "agentsessions.v1.HarnessRegistry/RetireHarness": "harness.retire",
  "agentsessions.v1.HarnessRegistry/FreeHarness": "harness.free",
  "harnesshost.v1.HarnessVersions/ListVersions": "harness.read",
  "harnesshost.v1.HarnessVersions/RetireVersion": "harness.retire",
  "grpc.reflection.v1.ServerReflection/ServerReflectionInfo": "api.reflect",
  "grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo": "api.reflect",
};

/** The permission a call path (`/service/Method`) needs; undefined when the method is not in the table. */
export function permissionOf(path: string): Permission | undefined {
  return METHOD_PERMISSIONS[path.startsWith("/") ? path.slice(1) : path];
}

/** The union of the roles' permissions. */
export function permissionsOfRoles(roles: readonly Role[]): ReadonlySet<Permission> {
  return new Set(roles.flatMap((r) => ROLE_PERMISSIONS[r]));
}
