// The cross-cutting policy of every RPC on both listeners, as a grpc-js server interceptor: request
// id, bearer auth and the permission table (permissions.ts), and one structured log line per finished
// call. Invariants: auth and the method's permission are decided before any handler runs, and the
// authenticated principal is bound to the call (caller.ts) before it does; the request id is echoed in headers/trailers and on the log line; log lines carry
// only bounded fields (method, code, duration, ids cut to logFieldChars) — never messages, inputs,
// outputs, tool args, tokens, fences or raw error text.
import { Metadata, ServerInterceptingCall, status as GrpcStatus } from "@grpc/grpc-js";
import type { ServerInterceptingCallInterface, ServerInterceptor, ServerMethodDefinition } from "@grpc/grpc-js";
import { DEFAULT_LIMITS } from "../limits/index.js";
import { type BearerAuth, isRefusal } from "./auth.js";
import { bindCaller } from "./caller.js";
import { permissionOf } from "./permissions.js";
import { clipForLog } from "../obs/log.js";
import type { HostMetrics } from "../obs/metrics.js";
import { REQUEST_ID_HEADER, ensureRequestId } from "./request-id.js";

/** The logging surface the server needs (a pino logger fits). */
export interface ServerLogger {
  debug(fields: object, message?: string): void;
  info(fields: object, message?: string): void;
  warn(fields: object, message?: string): void;
  error(fields: object, message?: string): void;
}

export interface CallPolicyOptions {
  readonly logger: ServerLogger;
  readonly auth?: BearerAuth;
  /** Listener label on log lines ("sessions" or "registry"). */
  readonly listener: string;
  /** Longest id written whole on a log line (limit logFieldChars); default DEFAULT_LIMITS. */
  readonly logFieldChars?: number;
  /** Where finished calls are counted (harnesshost_rpcs_total, harnesshost_rpc_duration_seconds). */
  readonly metrics?: HostMetrics;
}

export { clipForLog };

/** Health probes are exempt from auth (they reveal nothing and orchestrators cannot send tokens). */
const UNAUTHENTICATED_PREFIXES = ["/grpc.health.v1.Health/"];

export function callPolicy(opts: CallPolicyOptions): ServerInterceptor {
  return (method: ServerMethodDefinition<unknown, unknown>, next: ServerInterceptingCallInterface) => {
    const started = performance.now();
    const path = method.path;
    const quiet = UNAUTHENTICATED_PREFIXES.some((p) => path.startsWith(p));
    let requestId = "";
    let session = "";
    let finished = false;
    const finish = (code: number): void => {
      if (finished) return;
      finished = true;
      recordFinished(opts, { method: path, code, ms: performance.now() - started, requestId, session, quiet });
    };
    const call: ServerInterceptingCall = new ServerInterceptingCall(next, {
      start(startNext) {
        startNext({
          onReceiveMetadata(metadata, mdNext) {
            requestId = ensureRequestId(metadata);
            // The credential goes no further than here, whatever the outcome.
            const [header] = metadata.get("authorization");
            metadata.remove("authorization");
            if (!quiet && opts.auth !== undefined) {
              const who = opts.auth.authorize(
                typeof header === "string" ? header : undefined,
                permissionOf(path),
                path,
              );
              if (isRefusal(who)) {
                opts.metrics?.authRefused(who.permission ?? "unauthenticated");
                call.sendStatus({ code: who.code, details: who.details, metadata: new Metadata() });
                return;
              }
              bindCaller(metadata, who);
            }
            mdNext(metadata);
          },
          onReceiveMessage(message, msgNext) {
            session ||= sessionUidOf(message);
            msgNext(message);
          },
          onCancel() {
            finish(GrpcStatus.CANCELLED);
          },
        });
      },
      sendMetadata(metadata, mdNext) {
        if (requestId) metadata.set(REQUEST_ID_HEADER, requestId);
        mdNext(metadata);
      },
      sendMessage(message, msgNext) {
        session ||= sessionUidOf(message);
        msgNext(message);
      },
      sendStatus(status, statusNext) {
        const metadata = status.metadata ?? new Metadata();
        if (requestId) metadata.set(REQUEST_ID_HEADER, requestId);
        finish(status.code);
        statusNext({ ...status, metadata });
      },
    });
    return call;
  };
}

/** One finished call (or turn of a turn stream) as the policy records it. */
export interface FinishedCall {
  readonly method: string;
  readonly code: number;
  readonly ms: number;
  readonly requestId: string;
  /** The session it named ("" none). */
  readonly session: string;
  /** Logged at debug when OK (health probes). */
  readonly quiet?: boolean;
  /** Fields added to the log line (a turn's id on its stream). */
  readonly extra?: Readonly<Record<string, string>>;
}

/** Counts a finished call in the RPC metrics and writes its one bounded log line ("rpc finished"). */
export function recordFinished(opts: CallPolicyOptions, call: FinishedCall): void {
  const codeName = GrpcStatus[call.code] ?? String(call.code);
  opts.metrics?.rpc(opts.listener, call.method, codeName, call.ms / 1000);
  const fields = {
    listener: opts.listener,
    method: call.method,
    ...call.extra,
    code: codeName,
    duration_ms: Math.round(call.ms * 1000) / 1000,
    request_id: call.requestId,
    ...(call.session ? { session: clipForLog(call.session, opts.logFieldChars ?? DEFAULT_LIMITS.logFieldChars) } : {}),
  };
  levelOf(call.code, call.quiet ?? false, opts.logger)(fields, "rpc finished");
}

type LogFn = (fields: object, message?: string) => void;

/** The log level of a finished call with status `code` (health probes log OK at debug). */
export function levelOf(code: number, quiet: boolean, logger: ServerLogger): LogFn {
  switch (code) {
    case GrpcStatus.OK:
      return quiet ? logger.debug.bind(logger) : logger.info.bind(logger);
    case GrpcStatus.UNAVAILABLE:
      return logger.warn.bind(logger);
    case GrpcStatus.INVALID_ARGUMENT:
    case GrpcStatus.NOT_FOUND:
    case GrpcStatus.ALREADY_EXISTS:
    case GrpcStatus.FAILED_PRECONDITION:
    case GrpcStatus.ABORTED:
    case GrpcStatus.CANCELLED:
    case GrpcStatus.DEADLINE_EXCEEDED:
    case GrpcStatus.UNAUTHENTICATED:
    case GrpcStatus.PERMISSION_DENIED:
    case GrpcStatus.UNIMPLEMENTED:
    case GrpcStatus.OUT_OF_RANGE:
    case GrpcStatus.RESOURCE_EXHAUSTED:
      return logger.info.bind(logger);
    default:
      return logger.error.bind(logger);
  }
}

/** The session uid a request or response names, for the log line ("" when none). */
export function sessionUidOf(message: unknown): string {
  if (typeof message !== "object" || message === null) return "";
  const m = message as {
    $typeName?: unknown;
    session?: unknown;
    uid?: unknown;
    metadata?: { uid?: unknown };
    update?: { case?: unknown; value?: unknown };
  };
  switch (m.$typeName) {
    case "agentsessions.v1.Session":
      return typeof m.metadata?.uid === "string" ? m.metadata.uid : "";
    case "agentsessions.v1.ExecUpdate":
      return m.update?.case === "session" ? sessionUidOf(m.update.value) : "";
    case "agentsessions.v1.GetSessionRequest":
    case "agentsessions.v1.DeleteSessionRequest":
      return typeof m.uid === "string" ? m.uid : "";
    default:
      return typeof m.session === "string" ? m.session : "";
  }
}
