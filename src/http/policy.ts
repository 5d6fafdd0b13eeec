// The HTTP listener's call policy, the same as the gRPC listeners' (server/call-policy.ts): request id,
// bearer auth and the permission table, one structured log line per finished call. Invariants: auth
// and the method's permission are decided before any handler runs, with the same BearerAuth, the same
// permission table and the same refusal codes as gRPC, and the principal travels to the handler only
// as a context value this policy sets; the request id is echoed
// in the response headers (success and error) and on the log line; the log line carries only bounded
// fields (method, code, duration, request id, session uid cut to logFieldChars).
import { type Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { status as GrpcStatus } from "@grpc/grpc-js";
import { type BearerAuth, isRefusal } from "../server/auth.js";
import { permissionOf } from "../server/permissions.js";
import { CALLER_KEY } from "./caller-key.js";
import type { HostMetrics } from "../obs/metrics.js";
import { type ServerLogger, clipForLog, levelOf, sessionUidOf } from "../server/call-policy.js";
import { REQUEST_ID_HEADER, mintRequestId } from "../server/request-id.js";
import { connectErrorOf } from "./connect-service.js";

const VALID_REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

export interface HttpPolicyOptions {
  readonly logger: ServerLogger;
  readonly auth?: BearerAuth;
  readonly logFieldChars: number;
  readonly metrics?: HostMetrics;
}

export function httpPolicy(opts: HttpPolicyOptions): Interceptor {
  return (next) => async (req) => {
    const started = performance.now();
    const incoming = req.header.get(REQUEST_ID_HEADER);
    const requestId = incoming !== null && VALID_REQUEST_ID.test(incoming) ? incoming : mintRequestId();
    const path = `/${req.service.typeName}/${req.method.name}`;
    let session = "";
    const finish = (code: number): void => {
      const fields = {
        listener: "http",
        method: path,
        code: GrpcStatus[code] ?? String(code),
        duration_ms: Math.round((performance.now() - started) * 1000) / 1000,
        request_id: requestId,
        ...(session ? { session: clipForLog(session, opts.logFieldChars) } : {}),
      };
      levelOf(code, false, opts.logger)(fields, "rpc finished");
    };
    const failed = (err: unknown): ConnectError => {
      const ce = connectErrorOf(err);
      ce.metadata.set(REQUEST_ID_HEADER, requestId);
      finish(ce.code);
      return ce;
    };
    // The credential goes no further than here, whatever the outcome.
    const header = req.header.get("authorization");
    req.header.delete("authorization");
    if (opts.auth !== undefined) {
      const who = opts.auth.authorize(header, permissionOf(path), path);
      if (isRefusal(who)) {
        opts.metrics?.authRefused(who.permission ?? "unauthenticated");
        throw failed(new ConnectError(who.details, who.code as number as Code));
      }
      req.contextValues.set(CALLER_KEY, who);
    }
    if (!req.stream) session = sessionUidOf(req.message);
    let res: Awaited<ReturnType<typeof next>>;
    try {
      res = await next(req);
    } catch (err) {
      throw failed(err);
    }
    res.header.set(REQUEST_ID_HEADER, requestId);
    if (!res.stream) {
      finish(0);
      return res;
    }
    const messages = res.message;
    return {
      ...res,
      message: (async function* () {
        try {
          yield* messages;
        } catch (err) {
          throw failed(err);
        }
        finish(0);
      })(),
    };
  };
}
