// The console's only way to the host: Connect clients for Sessions, the read-only registry and the
// Console views, same-origin, with the tab's bearer token. Invariants: the token lives in this tab's
// sessionStorage only (asked once, kept for the tab, never in a URL or localStorage); every failure
// reaches the UI as an ApiError carrying the status code name and message — nothing fails silently;
// the token field is offered only once the host has asked for a token (a refusal for a missing or
// wrong one) or one is set, so a host without tokens shows none.
import { Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { HarnessRegistry } from "../../src/gen/agentsessions/v1/harness_registry_pb.js";
import { Sessions } from "../../src/gen/agentsessions/v1/session_pb.js";
import { Console } from "../../src/gen/harnesshost/v1/console_pb.js";
import { HarnessVersions, SessionVersions } from "../../src/gen/harnesshost/v1/versions_pb.js";

const TOKEN_KEY = "harnesshost.token";

export function getToken(): string {
  return sessionStorage.getItem(TOKEN_KEY) ?? "";
}

export function setToken(token: string): void {
  if (token === "") sessionStorage.removeItem(TOKEN_KEY);
  else sessionStorage.setItem(TOKEN_KEY, token);
}

const withToken: Interceptor = (next) => (req) => {
  const token = getToken();
  if (token !== "") req.header.set("authorization", `Bearer ${token}`);
  return next(req);
};

const transport = createConnectTransport({ baseUrl: location.origin, interceptors: [withToken] });

export const sessions = createClient(Sessions, transport);
export const registry = createClient(HarnessRegistry, transport);
export const views = createClient(Console, transport);
/** Upgrade (a session operation) and the registry's versions, read-only on this listener. */
export const upgrades = createClient(SessionVersions, transport);
export const harnessVersions = createClient(HarnessVersions, transport);

/** A failed call as the UI shows it: `code: message`. */
export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }

  /** The token is missing or wrong: the UI asks for it. */
  get auth(): boolean {
    return this.code === "unauthenticated" || this.code === "permission_denied";
  }
}

/** Code names as the CLI and docs/protocol.md print them (snake_case). */
function codeName(code: Code): string {
  return (Code[code] ?? `code_${code}`).replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase();
}

let tokenAsked = false;
const tokenAskedListeners = new Set<() => void>();

/** Whether the host refused a call for want of the right token in this tab (or a token is set). */
export function tokenWanted(): boolean {
  return tokenAsked || getToken() !== "";
}

/** Calls `fn` when the host first refuses a call for its token; returns the unsubscribe. */
export function onTokenWanted(fn: () => void): () => void {
  tokenAskedListeners.add(fn);
  return () => tokenAskedListeners.delete(fn);
}

export function apiError(err: unknown): ApiError {
  const e = err instanceof ApiError ? err : apiErrorOf(ConnectError.from(err));
  if (e.auth && !tokenAsked) {
    tokenAsked = true;
    for (const fn of tokenAskedListeners) fn();
  }
  return e;
}

function apiErrorOf(ce: ConnectError): ApiError {
  return new ApiError(codeName(ce.code), ce.rawMessage);
}
