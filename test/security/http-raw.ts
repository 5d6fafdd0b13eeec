// Raw HTTP requests to the HTTP listener, for bodies no Connect client would send (several envelopes,
// hand-made compression, GET with a message in the query). Invariant: every answer is read to its end
// and reduced to one Connect code and message, whichever protocol carried it (Connect unary or
// streaming, gRPC-Web trailers in headers or in the body), or to the bare HTTP status when no protocol
// answered.
import { type Agent, type IncomingMessage, request } from "node:http";
import { gzipSync } from "node:zlib";
import { create, toBinary } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { MessageSchema, PartSchema } from "../../src/gen/agentsessions/v1/common_pb.js";
import { ExecRequestSchema } from "../../src/gen/agentsessions/v1/session_pb.js";
import { userInput } from "../server/helpers.js";

/** The code of a call that succeeded (Connect's Code enum has no member for it). */
export const OK = 0;

export interface RawAnswer {
  readonly httpStatus: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The RPC's code (OK when it succeeded), undefined when no RPC answered (e.g. 405). */
  readonly code: Code | typeof OK | undefined;
  readonly message: string;
  readonly body: Buffer;
}

/** One envelope: flags byte, big-endian length, payload. */
export function envelope(payload: Uint8Array, compressed: boolean): Buffer {
  const out = Buffer.alloc(5 + payload.byteLength);
  out[0] = compressed ? 1 : 0;
  out.writeUInt32BE(payload.byteLength, 1);
  out.set(payload, 5);
  return out;
}

/** An encoded echo ExecRequest with `text` as its one user input. */
export function execBytes(text: string): Uint8Array {
  return toBinary(
    ExecRequestSchema,
    create(ExecRequestSchema, {
      harness: "echo",
      inputs: [userInput(text)],
    }),
  );
}

/** An encoded ExecRequest of `parts` empty parts (what requestMessages refuses). */
export function manyPartsBytes(parts: number): Uint8Array {
  return toBinary(
    ExecRequestSchema,
    create(ExecRequestSchema, {
      harness: "echo",
      inputs: [create(MessageSchema, { role: "user", parts: Array.from({ length: parts }, () => create(PartSchema)) })],
    }),
  );
}

export const gzip = (bytes: Uint8Array): Buffer => gzipSync(bytes, { level: 9 });

function codeOfName(name: string): Code | undefined {
  for (const [key, value] of Object.entries(Code)) {
    if (typeof value === "number" && key.replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase() === name) return value;
  }
  return undefined;
}

/** The envelopes of a streaming body: [flags, payload] each. */
export function envelopesOf(body: Buffer): [number, Buffer][] {
  const out: [number, Buffer][] = [];
  for (let at = 0; at + 5 <= body.length; ) {
    const len = body.readUInt32BE(at + 1);
    out.push([body[at] ?? 0, body.subarray(at + 5, at + 5 + len)]);
    at += 5 + len;
  }
  return out;
}

function grpcStatus(fields: Record<string, string | string[] | undefined>): { code: Code; message: string } {
  return {
    code: Number(fields["grpc-status"]) as Code,
    message: decodeURIComponent(String(fields["grpc-message"] ?? "")),
  };
}

function answerOf(
  httpStatus: number,
  headers: Record<string, string | string[] | undefined>,
  body: Buffer,
): Pick<RawAnswer, "code" | "message"> {
  const type = String(headers["content-type"] ?? "");
  if (type.startsWith("application/grpc-web")) {
    if (headers["grpc-status"] !== undefined) return grpcStatus(headers);
    const trailer = envelopesOf(body).find(([flags]) => (flags & 0x80) !== 0);
    if (trailer === undefined) return { code: undefined, message: "" };
    const fields: Record<string, string> = {};
    for (const line of trailer[1].toString("utf8").split("\r\n")) {
      const colon = line.indexOf(":");
      if (colon > 0) fields[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    return grpcStatus(fields);
  }
  if (type.startsWith("application/connect+")) {
    const end = envelopesOf(body).find(([flags]) => (flags & 0x02) !== 0);
    const json = JSON.parse(end?.[1].toString("utf8") ?? "{}") as { error?: { code: string; message?: string } };
    if (json.error === undefined) return { code: OK, message: "" };
    return { code: codeOfName(json.error.code), message: json.error.message ?? "" };
  }
  if (type.startsWith("application/json") && httpStatus !== 200) {
    const json = JSON.parse(body.toString("utf8")) as { code: string; message?: string };
    return { code: codeOfName(json.code), message: json.message ?? "" };
  }
  return { code: httpStatus === 200 ? OK : undefined, message: body.toString("utf8") };
}

/** Sends one request to `baseUrl` + `path` and reads the whole answer. */
export function rawRequest(
  baseUrl: string,
  method: "GET" | "POST",
  path: string,
  headers: Record<string, string>,
  body?: Uint8Array,
  agent?: Agent,
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, baseUrl), { method, headers, ...(agent ? { agent } : {}) }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("error", reject);
      res.on("end", () => {
        const all = Buffer.concat(chunks);
        resolve({
          httpStatus: res.statusCode ?? 0,
          headers: res.headers,
          body: all,
          ...answerOf(res.statusCode ?? 0, res.headers, all),
        });
      });
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** The protocols' headers for an enveloped (streaming) request, gzip-compressed or not. */
export const envelopedHeaders = {
  connect: (gzipped: boolean): Record<string, string> => ({
    "content-type": "application/connect+proto",
    "connect-protocol-version": "1",
    ...(gzipped ? { "connect-content-encoding": "gzip" } : {}),
  }),
  grpcWeb: (gzipped: boolean): Record<string, string> => ({
    "content-type": "application/grpc-web+proto",
    "x-grpc-web": "1",
    ...(gzipped ? { "grpc-encoding": "gzip" } : {}),
  }),
};

export interface StalledHttp {
  /** Reads the rest of the answer. */
  readToEnd(): Promise<RawAnswer>;
}

/**
 * Sends one Connect-streaming Exec on a connection of its own and does not read the answer (the
 * response is paused, so the host's writes back up once the socket buffers fill).
 */
export function stalledConnectExec(baseUrl: string, session: string, text: string): StalledHttp {
  const payload = toBinary(ExecRequestSchema, create(ExecRequestSchema, { session, inputs: [userInput(text)] }));
  const response = new Promise<IncomingMessage>((resolve, reject) => {
    const req = request(
      new URL("/agentsessions.v1.Sessions/Exec", baseUrl),
      { method: "POST", headers: envelopedHeaders.connect(false), agent: false },
      (res) => {
        res.pause();
        resolve(res);
      },
    );
    req.on("error", reject);
    req.end(envelope(payload, false));
  });
  return {
    async readToEnd() {
      const res = await response;
      const chunks: Buffer[] = [];
      for await (const chunk of res) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks);
      const httpStatus = res.statusCode ?? 0;
      return { httpStatus, headers: res.headers, body, ...answerOf(httpStatus, res.headers, body) };
    },
  };
}
