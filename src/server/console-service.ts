// harnesshost.v1.Console: the read-only views the operator console needs beyond Sessions (chain check,
// fork children, snapshots, the inbox of waiting turns, JSONL export, the filtered session list, where
// the configured harnesses come from). Invariants: nothing here writes
// to the journal or the snapshot store; every request is validated before anything is read; every
// answer is bounded (children ≤ MAX_CHILDREN, one ListWaiting call looks at ≤ WAITING_SCAN sessions,
// context ≤ CONTEXT_RECORDS, export is streamed in chunks of ≤ EXPORT_CHUNK_LINES lines).
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import type { LogRecord } from "../gen/agentsessions/v1/common_pb.js";
import type { Session } from "../gen/agentsessions/v1/session_pb.js";
import {
  ChainCheckSchema,
  type Console,
  type ExportSessionResponse,
  ExportSessionResponseSchema,
  InspectSessionResponseSchema,
  ListHarnessOriginsResponseSchema,
  ListSessionsResponseSchema,
  ListWaitingResponseSchema,
  type WaitingTurn,
  WaitingTurnSchema,
} from "../gen/harnesshost/v1/console_pb.js";
import type { Host } from "../host/host.js";
import { sessionProto, sessionView } from "../host/session-proto.js";
import { listSessionPage } from "../host/session-list.js";
import type { SessionInfo } from "../journal/types.js";
import type { MethodsOf, ServiceImpl } from "../wire/index.js";
import { invalid } from "./checks.js";
import { harnessOrigins } from "./harness-origins.js";
import { boundedId, optionalId } from "./edge-limits.js";
import { withinBytes } from "./list-page.js";
import { logRecordOf } from "./record-proto.js";
import { callerOf } from "./caller.js";
import { opContext } from "./request-id.js";
import { whoAmIOf } from "./who-am-i.js";
import { listedProject } from "./scope.js";

export type ConsoleMethods = MethodsOf<typeof Console>;

/** Children listed by InspectSession (the rest is reported as children_truncated). */
export const MAX_CHILDREN = 100;
/** Sessions one ListWaiting call looks at before it answers with a cursor. */
export const WAITING_SCAN = 500;
/** Records of a waiting turn sent as its context. */
export const CONTEXT_RECORDS = 16;
/** JSON lines per ExportSession message. */
export const EXPORT_CHUNK_LINES = 256;

const LIST_PAGE = 500;

/** Every session of `project`, page by page (the journal's keyset order), from `pageToken`. */
async function* sessionsOf(host: Host, project: string, pageToken = ""): AsyncGenerator<[SessionInfo, string]> {
  let token = pageToken;
  for (;;) {
    const page = await host.reads.listSessions({ project, pageSize: LIST_PAGE, pageToken: token });
    for (const info of page.sessions) yield [info, page.nextPageToken];
    if (page.nextPageToken === "") return;
    token = page.nextPageToken;
  }
}

/** The parent's fork children (newest first): one journal page, answered from its parent index. */
async function childrenOf(host: Host, parent: SessionInfo): Promise<{ children: Session[]; truncated: boolean }> {
  const page = await host.reads.listSessions({
    project: parent.project,
    parentUid: parent.uid,
    pageSize: MAX_CHILDREN,
    pageToken: "",
  });
  return { children: page.sessions.map(sessionProto), truncated: page.nextPageToken !== "" };
}

/** The tool call a waiting gate holds and the turn's records up to its request. */
async function waitingTurn(host: Host, session: Session): Promise<WaitingTurn> {
  const ref = session.pendingApproval;
  const uid = session.metadata?.uid ?? "";
  if (ref === undefined) return create(WaitingTurnSchema, { session });
  const to = Number(ref.requestSeq);
  const from = Math.max(1, to - CONTEXT_RECORDS + 1);
  const records = (await host.reads.recordRange(uid, from, to)).filter((r) => r.event.executionId === ref.executionId);
  // The gate's call record is the one the session-log projection names (callSeq), not a search.
  const gate = (await host.placer.sessionLog(uid)).gate({
    executionId: ref.executionId,
    toolCallId: ref.toolCallId,
    requestSeq: to,
  });
  const call =
    gate === undefined
      ? undefined
      : (records.find((r) => r.seq === gate.callSeq) ??
        (await host.reads.recordRange(uid, gate.callSeq, gate.callSeq))[0]);
  const context: LogRecord[] = records.map(logRecordOf);
  return create(WaitingTurnSchema, {
    session,
    context,
    ...(call ? { toolCall: logRecordOf(call) } : {}),
  });
}

export function consoleService(host: Host): ServiceImpl<ConsoleMethods> {
  const limits = host.limits;
  return {
    async inspectSession(req, ctx) {
      const uid = boundedId(limits, req.session, "session");
      const info = await host.placer.session(uid, opContext(ctx));
      const verified = await host.reads.verify(uid);
      const chain = verified.ok
        ? create(ChainCheckSchema, { ok: true, records: BigInt(verified.records), headSeq: BigInt(verified.head.seq) })
        : create(ChainCheckSchema, {
            ok: false,
            failure: verified.kind,
            firstBadSeq: BigInt(verified.seq),
            message: verified.message,
          });
      const { children, truncated } = await childrenOf(host, info);
      const checkpoint = await host.reads.latestCheckpoint(uid);
      const snapshots = [];
      if (checkpoint) {
        const size = (await host.snapshots.has(checkpoint.digest))
          ? (await host.snapshots.get(checkpoint.digest)).byteLength
          : -1;
        snapshots.push({
          digest: checkpoint.digest,
          sizeBytes: BigInt(size),
          seq: BigInt(checkpoint.seq),
          tier: "memory",
          createTime: timestampFromMs(checkpoint.createdAtMs),
        });
      }
      return create(InspectSessionResponseSchema, { chain, children, childrenTruncated: truncated, snapshots });
    },

    async listWaiting(req, ctx) {
      optionalId(limits, req.project, "project");
      if (req.pageToken.length > 1024) throw invalid("page_token is longer than 1024 characters");
      const listed = listedProject(host, req.project, ctx);
      if (!listed.visible) return create(ListWaitingResponseSchema, {});
      const project = listed.project || host.config.defaultProject;
      const waiting: WaitingTurn[] = [];
      let scanned = 0;
      let next = "";
      for await (const [info, pageNext] of sessionsOf(host, project, req.pageToken)) {
        scanned += 1;
        const session = await sessionView(host.placer, info);
        if (session.pendingApproval !== undefined) waiting.push(await waitingTurn(host, session));
        // Stop only at a page boundary, so the cursor resumes exactly after what was looked at.
        if (scanned % LIST_PAGE === 0 && scanned >= WAITING_SCAN) {
          next = pageNext;
          break;
        }
      }
      return create(ListWaitingResponseSchema, { waiting, nextPageToken: next, scanned });
    },

    async listSessions(req, ctx) {
      optionalId(limits, req.project, "project");
      optionalId(limits, req.harness, "harness");
      optionalId(limits, req.parentUid, "parent_uid");
      const listed = listedProject(host, req.project, ctx);
      if (!listed.visible) return create(ListSessionsResponseSchema, {});
      const page = await listSessionPage(host, {
        project: listed.project,
        pageSize: req.pageSize,
        pageToken: req.pageToken,
        harness: req.harness,
        states: req.states,
        turns: req.turns,
        parentUid: req.parentUid,
      });
      return create(
        ListSessionsResponseSchema,
        withinBytes(page.infos, page.sessions, page.nextPageToken, limits.listPageBytes),
      );
    },

    async whoAmI(_req, ctx) {
      return whoAmIOf(callerOf(ctx));
    },

    async listHarnessOrigins() {
      return create(ListHarnessOriginsResponseSchema, { origins: harnessOrigins(host) });
    },

    async *exportSession(req, ctx): AsyncGenerator<ExportSessionResponse> {
      const uid = boundedId(limits, req.session, "session");
      await host.placer.session(uid, opContext(ctx));
      let lines: string[] = [];
      for await (const line of host.reads.exportJsonl(uid)) {
        lines.push(`${line}\n`);
        if (lines.length === EXPORT_CHUNK_LINES) {
          yield create(ExportSessionResponseSchema, { jsonl: lines.join("") });
          lines = [];
        }
      }
      if (lines.length > 0) yield create(ExportSessionResponseSchema, { jsonl: lines.join("") });
    },
  };
}
