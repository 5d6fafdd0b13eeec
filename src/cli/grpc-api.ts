// The CLI's remote host: every SessionsApi call is a Sessions RPC to `--server`. Invariants: the
// documents commands print are the same as in process (same Session messages, same OUTPUT texts); the
// token is read from a file, sent only as `authorization: Bearer …`, and never printed.
import { readFileSync } from "node:fs";
import { credentials as grpcCredentials } from "@grpc/grpc-js";
import { EventKind, type LogRecord } from "../gen/agentsessions/v1/common_pb.js";
import { Sessions, type Session } from "../gen/agentsessions/v1/session_pb.js";
import { textMessage, textOf } from "../controller/events.js";
import { ErrorCode, HostError } from "../errors/index.js";
import { createClient, type DialOptions, type MethodsOf, type ServiceClient } from "../wire/index.js";
import { parseTokenFile } from "../server/auth.js";
import type { DecisionOutcome, ExecOutcome, ResumeOutcome, SessionsApi, SuspendOutcome } from "./api.js";
import { answerText, pendingTuple, questionIn, type PendingTuple } from "./decisions.js";
import { requireStr, str, UsageError, type FlagValues } from "./command.js";

/** The OUTPUT texts of a run of records, in order. */
export function outputsOf(records: readonly LogRecord[]): string[] {
  const out: string[] = [];
  for (const rec of records) {
    const ev = rec.event;
    if (ev?.kind === EventKind.EVENT_OUTPUT && ev.body.case === "message") out.push(textOf(ev.body.value));
  }
  return out;
}

/** Dial options from --token-file and --tls-ca (shared by every --server command). */
export function remoteDialOptions(values: FlagValues): DialOptions {
  const tokenFile = str(values, "token-file");
  const ca = str(values, "tls-ca");
  let token: string | undefined;
  if (tokenFile !== undefined) {
    token = parseTokenFile(readFileSync(tokenFile, "utf8"))[0];
    if (token === undefined) throw new UsageError(`--token-file ${tokenFile} holds no token`);
  }
  return {
    ...(ca !== undefined ? { credentials: grpcCredentials.createSsl(readFileSync(ca)) } : {}),
    ...(token !== undefined ? { metadata: { authorization: `Bearer ${token}` } } : {}),
  };
}

type SessionsClient = ServiceClient<MethodsOf<typeof Sessions>>;

export class GrpcApi implements SessionsApi {
  constructor(private readonly client: SessionsClient) {}

  static open(values: FlagValues): GrpcApi {
    return new GrpcApi(createClient(Sessions, requireStr(values, "server"), remoteDialOptions(values)));
  }

  async exec(p: Parameters<SessionsApi["exec"]>[0]): Promise<ExecOutcome> {
    let session: Session | undefined;
    const records: LogRecord[] = [];
    const stream = this.client.exec({
      session: p.session ?? "",
      harness: p.harness ?? "",
      inputs: p.inputs.map((t) => textMessage("user", t)),
      ...(p.expectedLastSeq !== undefined ? { expectedLastSeq: BigInt(p.expectedLastSeq) } : {}),
    });
    for await (const update of stream) {
      switch (update.update.case) {
        case "session":
          session = update.update.value;
          break;
        case "record":
          records.push(update.update.value);
          break;
        case "delta":
          if (update.update.value.chunk !== "") p.onDelta?.(update.update.value.chunk);
          break;
        case undefined:
          break;
        default: {
          const exhaustive: never = update.update;
          throw new Error(`unknown ExecUpdate ${String(exhaustive)}`);
        }
      }
    }
    const uid = session?.metadata?.uid;
    if (!uid) throw new HostError(ErrorCode.Internal, "Exec stream ended without a Session frame");
    const final = await this.get(uid);
    const last = records.at(-1);
    return {
      session: final,
      output: outputsOf(records).join("\n"),
      lastSeq: last ? Number(last.seq) : Number(final.lastSeq),
      records,
    };
  }

  async replay(session: string): Promise<{ outputs: string[]; modelCalls: number }> {
    const records: LogRecord[] = [];
    for await (const rec of this.records(session)) records.push(rec);
    return { outputs: outputsOf(records), modelCalls: 0 };
  }

  records(session: string): AsyncIterable<LogRecord> {
    return this.client.replay({ session });
  }

  async fork(p: { session: string; atSeq: number; count: number }): Promise<Session[]> {
    const res = await this.client.fork({ session: p.session, atSeq: BigInt(p.atSeq), count: p.count });
    return res.children;
  }

  get(session: string): Promise<Session> {
    return this.client.getSession({ uid: session });
  }

  async list(p: { project: string; pageSize: number }): Promise<Session[]> {
    const out: Session[] = [];
    let pageToken = "";
    do {
      const page = await this.client.listSessions({ project: p.project, pageSize: p.pageSize, pageToken });
      out.push(...page.sessions);
      pageToken = page.nextPageToken;
    } while (pageToken !== "");
    return out;
  }

  async suspend(session: string): Promise<SuspendOutcome> {
    const s = await this.client.suspend({ session });
    let snapshot = { memory: false, digest: "", local: "" };
    for await (const rec of this.client.replay({ session, fromSeq: s.lastSeq, toSeq: s.lastSeq })) {
      if (rec.event?.body.case === "lifecycle") {
        const l = rec.event.body.value;
        snapshot = { memory: l.snapshotMemory, digest: l.snapshotExternalUri, local: l.snapshotLocal };
      }
    }
    return { session: s, snapshot };
  }

  resume(session: string): Promise<Session> {
    return this.client.resume({ session });
  }

  async resumeTurn(session: string): Promise<ResumeOutcome> {
    const before = await this.get(session);
    const after = await this.client.resume({ session });
    const records: LogRecord[] = [];
    if (after.lastSeq > before.lastSeq) {
      for await (const rec of this.client.replay({ session, fromSeq: before.lastSeq + 1n, toSeq: after.lastSeq }))
        records.push(rec);
    }
    return { session: after, outputs: outputsOf(records) };
  }

  async approve(p: { session: string; approved: boolean; reason: string }): Promise<DecisionOutcome> {
    return this.decide(p.session, pendingTuple(await this.get(p.session)), p.approved, p.reason);
  }

  async answer(p: { session: string; text?: string; choice?: number }): Promise<DecisionOutcome> {
    const tuple = pendingTuple(await this.get(p.session));
    const records: LogRecord[] = [];
    for await (const rec of this.client.replay({ session: p.session, fromSeq: 1n, toSeq: BigInt(tuple.requestSeq) }))
      records.push(rec);
    return this.decide(p.session, tuple, true, answerText(questionIn(records, tuple), p));
  }

  private async decide(
    session: string,
    tuple: PendingTuple,
    approved: boolean,
    reason: string,
  ): Promise<DecisionOutcome> {
    const res = await this.client.approve({
      session,
      executionId: tuple.executionId,
      toolCallId: tuple.toolCallId,
      requestSeq: BigInt(tuple.requestSeq),
      approved,
      reason,
    });
    const decision = res.decision;
    if (!res.session || !decision)
      throw new HostError(ErrorCode.Internal, "Approve answered without a session or decision");
    return { session: res.session, ...tuple, approved, decision };
  }

  async close(): Promise<void> {
    this.client.close();
  }
}
