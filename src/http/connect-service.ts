// Our transport-neutral service implementations (wire/server.ts ServiceImpl, the same objects the
// grpc-js server serves) as Connect routes. Invariants: a method is served by calling exactly the
// handler the gRPC listener calls — nothing about a method's meaning lives here; a failure leaves with
// the status statusOfError assigns on the gRPC path (Connect codes are gRPC's numbers), its details
// redacted and bounded the same way; the handler's AbortSignal is Connect's (client gone, deadline,
// shutdown); a response a handler yields already encoded (the packed frames of an Exec's `final` shape,
// docs/protocol.md §20 rule 6) leaves as the messages it encodes, one Connect message each.
import { Metadata } from "@grpc/grpc-js";
import type { DescMethod, Message } from "@bufbuild/protobuf";
import type { GenService, GenServiceMethods } from "@bufbuild/protobuf/codegenv2";
import { type Code, ConnectError, type ConnectRouter, type HandlerContext } from "@connectrpc/connect";
import { ErrorCode, HostError } from "../errors/index.js";
import { type CallContext, EncodedResponse, type ServiceImpl } from "../wire/index.js";
import { ERROR_CODE_TRAILER, statusOfError } from "../wire/status.js";
import { bindCaller } from "../server/caller.js";
import { CALLER_KEY } from "./caller-key.js";

/** The ConnectError a handler failure becomes: the gRPC path's code, details and error-code trailer (as a header). */
export function connectErrorOf(err: unknown): ConnectError {
  if (err instanceof ConnectError) return err;
  const status = statusOfError(err, new Metadata());
  const code = status.metadata.get(ERROR_CODE_TRAILER)[0];
  const headers = typeof code === "string" ? { [ERROR_CODE_TRAILER]: code } : undefined;
  return new ConnectError(status.details, status.code as number as Code, headers);
}

/** Request headers as the metadata our handlers read (authorization never passes). */
function metadataOf(headers: Headers): Metadata {
  const md = new Metadata();
  headers.forEach((value, key) => {
    if (key === "authorization" || key.endsWith("-bin") || !/^[0-9a-z_.-]+$/.test(key)) return;
    md.add(key, value);
  });
  return md;
}

function callContextOf(hctx: HandlerContext): { ctx: CallContext; flush(): void } {
  const trailers = new Metadata();
  const copy = (md: Metadata, into: Headers): void => {
    for (const [key, values] of Object.entries(md.getMap())) {
      if (typeof values === "string") into.set(key, values);
    }
  };
  const metadata = metadataOf(hctx.requestHeader);
  const caller = hctx.values.get(CALLER_KEY);
  if (caller !== undefined) bindCaller(metadata, caller);
  const ctx: CallContext = {
    metadata,
    signal: hctx.signal,
    // Connect's context does not carry the socket's address; no Sessions or registry handler reads it.
    peer: "",
    trailers,
    sendHeader(md) {
      copy(md, hctx.responseHeader);
    },
    // Connect sends its response headers with the first response already.
    deferHeader(md) {
      copy(md, hctx.responseHeader);
    },
  };
  return { ctx, flush: () => copy(trailers, hctx.responseTrailer) };
}

type UnaryFn = (request: Message, ctx: CallContext) => unknown;
type StreamFn = (request: Message, ctx: CallContext) => AsyncIterable<unknown>;

/** Which methods of a service are served, and what the others answer (UNIMPLEMENTED with `why`). */
export interface RouteOnly<S extends GenServiceMethods> {
  readonly methods: readonly (keyof S & string)[];
  readonly why: string;
}

/**
 * Routes the methods of `service` to `impl` — all of them, or only `only.methods`, the others then
 * answering UNIMPLEMENTED with `only.why`.
 */
export function routeService<S extends GenServiceMethods>(
  router: ConnectRouter,
  service: GenService<S>,
  impl: ServiceImpl<S>,
  only?: RouteOnly<S>,
): void {
  const table = impl as unknown as Record<string, unknown>;
  for (const method of service.methods as readonly DescMethod[]) {
    if (only !== undefined && !only.methods.includes(method.localName)) {
      const refused = new HostError(ErrorCode.Unimplemented, `${method.parent.typeName}.${method.name}: ${only.why}`);
      router.rpc(method, unary(() => Promise.reject(refused)) as never);
      continue;
    }
    const fn = table[method.localName];
    if (typeof fn !== "function") throw new HostError(ErrorCode.Internal, `no handler for ${method.name}`);
    const bound = fn.bind(impl) as (...a: never[]) => unknown;
    switch (method.methodKind) {
      case "unary":
        router.rpc(method, unary(bound as unknown as UnaryFn) as never);
        break;
      case "server_streaming":
        router.rpc(method, serverStream(bound as unknown as StreamFn) as never);
        break;
      default:
        // Sessions and the registry have no client-streaming methods; none is routed over HTTP.
        throw new HostError(ErrorCode.Internal, `${method.name}: ${method.methodKind} is not routed over HTTP`);
    }
  }
}

function unary(fn: UnaryFn) {
  return async (request: Message, hctx: HandlerContext): Promise<unknown> => {
    const { ctx, flush } = callContextOf(hctx);
    try {
      return await fn(request, ctx);
    } catch (err) {
      throw connectErrorOf(err);
    } finally {
      flush();
    }
  };
}

function serverStream(fn: StreamFn) {
  return async function* (request: Message, hctx: HandlerContext): AsyncGenerator<unknown> {
    const { ctx, flush } = callContextOf(hctx);
    try {
      for await (const item of fn(request, ctx)) {
        // Connect encodes what it is given: packed frames go as messages of one frame each (§20 rule 6
        // allows one or more whole frames per message).
        if (item instanceof EncodedResponse) yield* item.messages;
        else yield item;
      }
    } catch (err) {
      throw connectErrorOf(err);
    } finally {
      flush();
    }
  };
}
