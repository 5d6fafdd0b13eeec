// Shared checks of the hostile-peer suites: the host answers health within a bound and every
// journal still verifies; hostile clients that never read; the host process's resident memory and
// the budget a served host's peak must stay within during one hostile case.
import { readFileSync, writeFileSync } from "node:fs";
import { connect, type ClientHttp2Session, type ClientHttp2Stream } from "node:http2";
import { create, toBinary } from "@bufbuild/protobuf";
import * as grpc from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import { protoPath as healthProtoPath } from "grpc-health-check";
import { expect } from "vitest";
import { ExecRequestSchema } from "../../src/gen/agentsessions/v1/session_pb.js";
import type { Journal } from "../../src/journal/types.js";
import { DEFAULT_LIMITS } from "../../src/limits/index.js";
import { userInput } from "../server/helpers.js";
import { envelope } from "./http-raw.js";

/** Health answers SERVING within `withinMs` (a deadline on the call, not a timing assertion). */
export async function healthServing(addr: string, withinMs = 1000): Promise<void> {
  expect(await healthStatus(addr, withinMs)).toBe("SERVING");
}

type Check = (
  req: object,
  opts: grpc.CallOptions,
  cb: (err: grpc.ServiceError | null, res?: Record<string, unknown>) => void,
) => void;
type HealthCtor = new (addr: string, creds: grpc.ChannelCredentials) => grpc.Client & { check: Check };

const Health = (
  grpc.loadPackageDefinition(loadSync(healthProtoPath, { keepCase: true, enums: String })) as unknown as {
    grpc: { health: { v1: { Health: HealthCtor } } };
  }
).grpc.health.v1.Health;

/** The health status of `service` ("" = the server), failing when no answer comes within `withinMs`. */
export function healthStatus(addr: string, withinMs = 1000, service = ""): Promise<string> {
  return new Promise((resolve, reject) => {
    const client = new Health(addr, grpc.credentials.createInsecure());
    client.check({ service }, { deadline: Date.now() + withinMs }, (err, res) => {
      client.close();
      if (err) reject(err);
      else resolve(String(res?.["status"] ?? ""));
    });
  });
}

export async function allJournalsVerify(journal: Journal): Promise<void> {
  for (const uid of await journal.allSessionUids()) {
    const result = await journal.verify(uid);
    expect(result, uid).toMatchObject({ ok: true });
  }
}

export interface Stalled {
  readonly session: ClientHttp2Session;
  readonly stream: ClientHttp2Stream;
  /** Reads the rest of the stream; resolves to its grpc-status and grpc-message. */
  readToEnd(): Promise<{ code: number; message: string }>;
}

/** Sends one Exec over raw HTTP/2 and does not read the response. */
export function stalledExec(addr: string, session: string, text: string): Stalled {
  const h2 = connect(`http://${addr}`);
  h2.on("error", () => undefined);
  const frame = envelope(
    toBinary(ExecRequestSchema, create(ExecRequestSchema, { session, inputs: [userInput(text)] })),
    false,
  );
  const stream = h2.request({
    ":method": "POST",
    ":path": "/agentsessions.v1.Sessions/Exec",
    "content-type": "application/grpc",
    te: "trailers",
  });
  stream.on("error", () => undefined);
  stream.end(frame);
  const trailers = new Promise<{ code: number; message: string }>((resolve) => {
    stream.on("trailers", (t) =>
      resolve({ code: Number(t["grpc-status"]), message: decodeURIComponent(String(t["grpc-message"] ?? "")) }),
    );
  });
  return {
    session: h2,
    stream,
    async readToEnd() {
      stream.resume();
      const result = await trailers;
      h2.close();
      return result;
    },
  };
}

/** A /proc/PID/status field in bytes (VmRSS: resident now, VmHWM: the peak since start or the last reset). */
export function procMemoryBytes(pid: number, field: "VmRSS" | "VmHWM"): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (m === null) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(m[1]) * 1024;
}

/**
 * Resets the process's peak RSS (VmHWM) to its current RSS (Linux: "5" to /proc/PID/clear_refs), so
 * the next reading is the peak of what follows. False where the kernel refuses; VmHWM then stays the
 * peak since start, still an upper bound of what follows.
 */
export function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5");
    return true;
  } catch {
    return false;
  }
}

const MiB = 1024 * 1024;
/**
 * The most resident memory a served host (`harnesshost serve`, default limits) may reach during any one
 * hostile case. A host that served the cases is ~220 MiB; each case is bounded by its limits (a request
 * is at most requestBytes and decodes into at most requestMessages messages) plus V8's heap slack.
 * Before the limits the same clients took the host to 1.5-3.9 GB (issue 24: 18 million-part Execs
 * 3.9 GB, 100 never-reading clients 1.76 GB, a 128-child fork of a 3 MB session 1.56 GB); before
 * requestMessages, the many-part case peaked at 2.2 GB.
 */
export const HOST_RSS_BUDGET = 512 * MiB;
/** Repetitions of each hostile request: enough that anything kept per request would add up. */
export const REPEAT = 20;
/** Never-reading clients at once (the count). */
export const STALLED_CLIENTS = 100;
/**
 * What never-reading clients may add on top: each holds at most streamBufferBytes of its stream (the
 * limit is per stream, not global: 100 of them measured ~380 MiB with 1 MiB inputs, 1.76 GB before it).
 */
export const STALLED_BUDGET = STALLED_CLIENTS * DEFAULT_LIMITS.streamBufferBytes;

/**
 * Runs one hostile case against the served host `pid` (health on `addr`) and asserts health still
 * answers and the host's peak RSS during the case (VmHWM, reset first) stayed within `budget`.
 */
export async function withinRssBudget(
  served: { readonly pid: number; readonly addr: string },
  name: string,
  hostile: () => Promise<void>,
  budget = HOST_RSS_BUDGET,
): Promise<void> {
  resetPeakRss(served.pid);
  await hostile();
  await healthServing(served.addr);
  const peak = procMemoryBytes(served.pid, "VmHWM");
  const now = procMemoryBytes(served.pid, "VmRSS");
  console.info(`${name}: host peak RSS ${Math.round(peak / MiB)} MiB (now ${Math.round(now / MiB)} MiB)`);
  expect(peak, `${name}: host peak RSS ${Math.round(peak / MiB)} MiB`).toBeLessThan(budget);
}
