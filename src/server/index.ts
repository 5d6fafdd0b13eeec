// The gRPC server: Sessions and HarnessRegistry services, health, reflection, auth and call logging.
export { startServer, DEFAULT_GRACE_MS, SESSIONS_SERVICE } from "./server.js";
export type { RunningServer, ServerOptions, TlsFiles } from "./server.js";
export { sessionsService, MAX_FORK_CHILDREN } from "./sessions-service.js";
export { registryService } from "./registry-service.js";
export { BearerAuth, parseTokenFile } from "./auth.js";
export { type LoadedCredentials, loadCredentials } from "./credential-file.js";
export { type LineHolder, tokenFileLine } from "./principals.js";
export { callPolicy, sessionUidOf } from "./call-policy.js";
export type { ServerLogger } from "./call-policy.js";
export { checkListenAddresses, isLoopbackLiteral, LISTENER_OFF } from "./listen-policy.js";
export { ensureRequestId, mintRequestId, REQUEST_ID_HEADER } from "./request-id.js";
