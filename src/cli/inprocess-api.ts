// The CLI's in-process host: opens the journal directly and runs turns in this process. Invariant:
// it performs exactly the Placer operations the server would, so a journal written here is the same
// a server would have written.
import { create } from "@bufbuild/protobuf";
import { LogRecordSchema, type LogRecord } from "../gen/agentsessions/v1/common_pb.js";
import type { Session } from "../gen/agentsessions/v1/session_pb.js";
import { textMessage } from "../controller/events.js";
import { newSessionUid } from "../controller/ids.js";
import { checkSessionHarness } from "../host/harness-rule.js";
import { Host } from "../host/host.js";
import type { HostConfigInput } from "../host/config.js";
import { sessionProto, sessionView } from "../host/session-proto.js";
import { servedSession } from "../host/served-session.js";
import { listSessionPage } from "../host/session-list.js";
import { answerText, pendingTuple, pendingQuestion } from "../client/decisions.js";
import { outputOf } from "../client/exec.js";
import type { JournalRecord } from "../journal/types.js";
import type {
  DecisionOutcome,
  ExecOutcome,
  ListFilter,
  ResumeOutcome,
  SessionsApi,
  SuspendOutcome,
  UpgradeOutcome,
} from "./api.js";

export function logRecord(rec: JournalRecord): LogRecord {
  return create(LogRecordSchema, {
    seq: BigInt(rec.seq),
    prevHash: rec.prevHash,
    contentHash: rec.contentHash,
    fence: BigInt(rec.fence),
    event: rec.event,
  });
}

export class InProcessApi implements SessionsApi {
  private constructor(private readonly host: Host) {}

  static async open(config: HostConfigInput): Promise<InProcessApi> {
    return new InProcessApi(await Host.open(config));
  }

  async exec(p: Parameters<SessionsApi["exec"]>[0]): Promise<ExecOutcome> {
    const info = p.session
      ? await this.host.getSession(p.session)
      : await this.host.createSession(p.harness ? { harness: p.harness } : {});
    if (p.session) checkSessionHarness(info, p.harness);
    p.onSession?.(info.uid);
    const signal = new AbortController().signal;
    const result = await this.host.placer.exec({
      session: info.uid,
      inputs: p.inputs.map((t) => textMessage("user", t)),
      ...(p.expectedLastSeq !== undefined ? { expectedLastSeq: p.expectedLastSeq } : {}),
      ...(p.onDelta || p.onOutput
        ? {
            observer: {
              onDelta: (_id: string, chunk: string) => p.onDelta?.(chunk),
              onRecord: (rec: JournalRecord) => {
                const text = outputOf(logRecord(rec));
                if (text !== undefined) p.onOutput?.(text);
              },
            },
          }
        : {}),
      signal,
    });
    return {
      session: await servedSession(this.host, info.uid),
      output: result.outputs.join("\n"),
      lastSeq: result.lastSeq,
      records: result.records.map(logRecord),
    };
  }

  async replay(session: string): Promise<{ outputs: string[]; modelCalls: number }> {
    const result = await this.host.placer.replay(session, new AbortController().signal);
    return { outputs: [...result.outputs], modelCalls: 0 };
  }

  async create(p: { name: string; harness: string; model: string; project: string }): Promise<Session> {
    const info = await this.host.createSession(p);
    return servedSession(this.host, info.uid);
  }

  async *records(session: string, fromSeq = 1): AsyncIterable<LogRecord> {
    await this.host.getSession(session);
    for await (const rec of this.host.reads.records(session, fromSeq)) yield logRecord(rec);
  }

  async fork(p: Parameters<SessionsApi["fork"]>[0]): Promise<Session[]> {
    const parent = await this.host.getSession(p.session);
    const children = Array.from({ length: p.count }, (_, i) => ({
      uid: newSessionUid(),
      name: p.childNames?.[i] ?? "",
      project: parent.project,
      harness: parent.harness,
      model: parent.model,
      annotations: parent.annotations,
      ...(parent.origin ? { origin: parent.origin } : {}),
    }));
    const res = await this.host.placer.fork({
      parent: p.session,
      atSeq: p.atSeq,
      children,
      signal: new AbortController().signal,
    });
    return res.children.map(sessionProto);
  }

  async get(session: string): Promise<Session> {
    return servedSession(this.host, session);
  }

  async list(p: ListFilter): Promise<Session[]> {
    const out: Session[] = [];
    let pageToken = "";
    do {
      const page = await listSessionPage(this.host, { ...p, pageToken });
      out.push(...page.sessions);
      pageToken = page.nextPageToken;
    } while (pageToken !== "");
    return out;
  }

  async suspend(session: string): Promise<SuspendOutcome> {
    const res = await this.host.placer.suspend(session, new AbortController().signal);
    return {
      session: await servedSession(this.host, session),
      snapshot: { memory: res.ref.memory, digest: res.ref.externalUri, local: res.ref.local },
    };
  }

  async upgrade(p: { session: string; toVersion: string }): Promise<UpgradeOutcome> {
    const r = await this.host.placer.upgrade(p.session, p.toVersion, new AbortController().signal);
    return {
      fromVersion: r.from,
      toVersion: r.to,
      upgradeSeq: r.upgradeSeq,
      replayedTurns: r.replayedTurns,
      snapshot: r.snapshot,
    };
  }

  async resume(session: string): Promise<Session> {
    return (await this.resumeTurn(session)).session;
  }

  async resumeTurn(session: string): Promise<ResumeOutcome> {
    const res = await this.host.placer.resume(session, new AbortController().signal);
    return { session: await servedSession(this.host, session), outputs: [...(res.turn?.outputs ?? [])] };
  }

  async approve(p: Parameters<SessionsApi["approve"]>[0]): Promise<DecisionOutcome> {
    const tuple = p.tuple ?? pendingTuple(await sessionView(this.host.placer, await this.host.getSession(p.session)));
    return this.decide(p.session, tuple, p.approved, p.reason);
  }

  async answer(p: { session: string; text?: string; choice?: number }): Promise<DecisionOutcome> {
    const session = await sessionView(this.host.placer, await this.host.getSession(p.session));
    const tuple = pendingTuple(session);
    return this.decide(p.session, tuple, true, answerText(pendingQuestion(session, tuple), p));
  }

  private async decide(
    session: string,
    tuple: ReturnType<typeof pendingTuple>,
    approved: boolean,
    reason: string,
  ): Promise<DecisionOutcome> {
    const res = await this.host.placer.approve(session, { ...tuple, approved, reason });
    return { session: await servedSession(this.host, session), ...tuple, approved, decision: logRecord(res.record) };
  }

  async cancel(p: { session: string; executionId?: string; reason: string }): Promise<Session> {
    await this.host.placer.cancel({
      session: p.session,
      ...(p.executionId ? { executionId: p.executionId } : {}),
      reason: p.reason,
    });
    return servedSession(this.host, p.session);
  }

  async delete(session: string): Promise<Session> {
    return sessionProto(await this.host.placer.delete(session));
  }

  async close(): Promise<void> {
    await this.host.close();
  }
}

export { newSessionUid };
