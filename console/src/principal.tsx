// Who the console acts as: the host's answer to Console.WhoAmI, shown in the top bar, and what it lets
// the views offer. Invariants: the principal shown is the host's answer for the tab's credential,
// never a guess; an action is hidden only when the host said the principal lacks its permission (an
// unanswered or unauthenticated WhoAmI hides nothing) — hiding is a courtesy, the host still refuses.
import { createContext } from "preact";
import { useContext } from "preact/hooks";
import type { WhoAmIResponse } from "../../src/gen/harnesshost/v1/console_pb.js";

export const Me = createContext<WhoAmIResponse | undefined>(undefined);

/** Whether the tab's principal may do what `permission` allows (true until the host says otherwise). */
export function useCan(): (permission: string) => boolean {
  const me = useContext(Me);
  return (permission) => me === undefined || !me.authenticated || me.permissions.includes(permission);
}

/** The principal in the top bar: name, roles, projects (nothing on a host that checks no credentials). */
export function PrincipalBadge({ me }: { me: WhoAmIResponse | undefined }) {
  if (me === undefined || !me.authenticated) return null;
  const roles = me.kind === "registrar" ? "registrar" : me.roles.join(", ");
  const projects = me.allProjects ? "every project" : me.projects.join(", ");
  return (
    <span class="principal" data-testid="principal" title={`verified by ${me.via}`}>
      <strong data-testid="principal-name">{me.principal}</strong>
      <span class="muted"> · </span>
      <span data-testid="principal-roles">{roles}</span>
      <span class="muted"> · </span>
      <span data-testid="principal-projects">{projects}</span>
    </span>
  );
}

/** Where a hidden action was: what it needs, so the page says why it is not offered. */
export function Lacks({ permission, what }: { permission: string; what: string }) {
  return (
    <span class="muted lacks" data-testid="lacks" data-permission={permission}>
      {what}: your role lacks {permission}
    </span>
  );
}
