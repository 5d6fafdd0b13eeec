// agentsessions.v1.Sessions served on a Host (docs/protocol.md §15, reference semantics with its rough edges
// fixed). Invariants: every request is validated before anything is read or written, so a bad
// request changes nothing; every failure leaves as the status grpcStatusOf assigns to its HostError.
import { EFFECTS_ANNOTATION } from "../wire/annotations.js";
import { EXEC_UPDATES_HEADER, execShapeOf } from "../wire/exec-updates.js";
import { Metadata } from "@grpc/grpc-js";
import { create } from "@bufbuild/protobuf";
import type { LogRecord } from "../gen/agentsessions/v1/common_pb.js";
import {
  ApproveResponseSchema,
  ForkResponseSchema,
  ListSessionsResponseSchema,
  type Session,
  type Sessions,
} from "../gen/agentsessions/v1/session_pb.js";
import { newSessionUid } from "../controller/ids.js";
import type { Host } from "../host/host.js";
import { servedSession } from "../host/served-session.js";
import { sessionProto } from "../host/session-proto.js";
import { listSessionPage } from "../host/session-list.js";
import type { SessionMetaInput } from "../journal/types.js";
import { formatBytes, overLimit } from "../limits/index.js";
import type { MethodsOf, ServiceImpl } from "../wire/index.js";
import { opContext } from "./request-id.js";
import { int64, invalid } from "./checks.js";
import { boundedId, checkMetadata, optionalId } from "./edge-limits.js";
import { execUpdates } from "./exec-stream.js";
import { withinBytes } from "./list-page.js";
import { logRecordOf } from "./record-proto.js";
import { actorOf } from "./actor.js";
import { callerOf } from "./caller.js";
import { creatableProject, listedProject } from "./scope.js";

/** Fork fan-out bounds (docs/protocol.md §10: outside 0..128 is INVALID_ARGUMENT; 0 means 1). */
export const MAX_FORK_CHILDREN = 128;

export type SessionsMethods = MethodsOf<typeof Sessions>;

export { EFFECTS_ANNOTATION, servedSession };

/**
 * forkBytes: what the fork would write — each child copies the parent's records through at_seq and
 * carries its metadata — checked before any child exists (and before a memory parent is snapshotted).
 */
async function checkForkBytes(host: Host, parent: string, atSeq: number, count: number, metaBytes: number) {
  const through = atSeq === 0 ? (await host.reads.head(parent)).seq : atSeq;
  const perChild = (await host.reads.recordBytes(parent, through)) + metaBytes;
  const total = perChild * count;
  if (total > host.limits.forkBytes) {
    throw overLimit("forkBytes", host.limits.forkBytes, total, `Fork of ${count} children × ${formatBytes(perChild)}`);
  }
}

export function sessionsService(host: Host): ServiceImpl<SessionsMethods> {
  const reread = (uid: string): Promise<Session> => servedSession(host, uid);
  const limits = host.limits;
  const id = (value: string, field: string): string => boundedId(limits, value, field);
  return {
    async createSession(req, ctx) {
      const s = req.session;
      optionalId(limits, s?.harness ?? "", "session.harness");
      optionalId(limits, s?.metadata?.project ?? "", "session.metadata.project");
      optionalId(limits, s?.model ?? "", "session.model");
      checkMetadata(limits, "the session's name, labels and annotations", {
        name: s?.metadata?.name ?? "",
        labels: s?.labels ?? {},
        annotations: s?.annotations ?? {},
      });
      const project = creatableProject(host, s?.metadata?.project ?? "", ctx);
      return sessionProto(
        await host.createSession({
          harness: s?.harness ?? "",
          project,
          name: s?.metadata?.name ?? "",
          model: s?.model ?? "",
          labels: s?.labels ?? {},
          annotations: s?.annotations ?? {},
          ...(s?.origin ? { origin: s.origin } : {}),
          ...(s?.identity ? { identity: s.identity } : {}),
        }),
      );
    },

    async getSession(req, ctx) {
      const uid = id(req.uid, "uid");
      return servedSession(host, await host.placer.session(uid, opContext(ctx)));
    },

    async listSessions(req, ctx) {
      optionalId(limits, req.project, "project");
      const listed = listedProject(host, req.project, ctx);
      if (!listed.visible) return create(ListSessionsResponseSchema, {});
      // The reference's request has no filters; harnesshost.v1.Console.ListSessions is the filtered one.
      const page = await listSessionPage(host, {
        project: listed.project,
        pageSize: req.pageSize,
        pageToken: req.pageToken,
        harness: "",
        states: [],
        parentUid: "",
      });
      return create(
        ListSessionsResponseSchema,
        withinBytes(page.infos, page.sessions, page.nextPageToken, limits.listPageBytes),
      );
    },

    async deleteSession(req, ctx) {
      const uid = id(req.uid, "uid");
      return sessionProto(await host.placer.delete(uid, opContext(ctx)));
    },

    async cancel(req, ctx) {
      const session = id(req.session, "session");
      optionalId(limits, req.executionId, "execution_id");
      checkMetadata(limits, "the cancel's reason", { extra: [req.reason] });
      const op = opContext(ctx);
      await host.placer.cancel({
        session,
        ...(op.actor ? { identity: op.actor } : {}),
        ...(req.executionId !== "" ? { executionId: req.executionId } : {}),
        reason: req.reason,
        ctx: op,
      });
      return reread(session);
    },

    async approve(req, ctx) {
      const session = id(req.session, "session");
      id(req.executionId, "execution_id");
      id(req.toolCallId, "tool_call_id");
      checkMetadata(limits, "the decision's reason", { extra: [req.reason] });
      const requestSeq = int64(req.requestSeq, "request_seq", 1);
      if (req.approved === undefined) throw invalid("approved is required (false denies)");
      const actor = actorOf(callerOf(ctx), req.identity);
      const res = await host.placer.approve(
        session,
        {
          executionId: req.executionId,
          toolCallId: req.toolCallId,
          requestSeq,
          approved: req.approved,
          reason: req.reason,
          ...(actor ? { identity: actor } : {}),
        },
        opContext(ctx),
      );
      return create(ApproveResponseSchema, { session: await reread(session), decision: logRecordOf(res.record) });
    },

    exec(req, ctx) {
      // §20: a shape the client negotiated is echoed in the response headers; an unknown one is refused.
      const asked = execShapeOf(ctx.metadata.get(EXEC_UPDATES_HEADER));
      if (asked.kind === "refused") throw invalid(asked.reason);
      const op = opContext(ctx);
      // A new session goes into the caller's project; an existing one is checked where Exec reads it
      // (the placer's one session lookup), so a turn on it computes no project here.
      const project = op.projects === undefined || req.session !== "" ? "" : creatableProject(host, "", ctx);
      if (asked.kind === "reference") return execUpdates(host, req, ctx.signal, op, project);
      const echo = new Metadata();
      echo.set(EXEC_UPDATES_HEADER, asked.shape);
      // With the Session frame that follows, in one write (a refusal sends it with the status).
      ctx.deferHeader(echo);
      return execUpdates(host, req, ctx.signal, op, project, asked.shape);
    },

    async *replay(req, ctx): AsyncGenerator<LogRecord> {
      const session = id(req.session, "session");
      const from = Math.max(1, int64(req.fromSeq, "from_seq", Number.MIN_SAFE_INTEGER));
      const to = int64(req.toSeq, "to_seq");
      await host.placer.session(session, opContext(ctx));
      if (to !== 0 && to < from) return;
      for await (const rec of host.reads.records(session, from, to)) yield logRecordOf(rec);
    },

    async suspend(req, ctx) {
      const session = id(req.session, "session");
      await host.placer.suspend(session, ctx.signal, opContext(ctx));
      return reread(session);
    },

    async resume(req, ctx) {
      const session = id(req.session, "session");
      await host.placer.resume(session, ctx.signal, undefined, opContext(ctx));
      return reread(session);
    },

    async fork(req, ctx) {
      const session = id(req.session, "session");
      // 0 is the Go client's default ("0 means one"); a negative count is still refused.
      const count = req.count === 0 ? 1 : req.count;
      if (count < 1 || count > MAX_FORK_CHILDREN)
        throw invalid(`count must be 1..${MAX_FORK_CHILDREN} (0 means 1), got ${req.count}`);
      if (req.identity !== undefined)
        throw invalid("identity is not supported on Fork (children carry no per-child principal)");
      for (const [i, n] of req.childNames.entries()) optionalId(limits, n, `child_names[${i}]`);
      if (req.childNames.length !== 0 && req.childNames.length !== count) {
        throw invalid(
          `child_names must be empty or have exactly count (${count}) entries, got ${req.childNames.length}`,
        );
      }
      const atSeq = int64(req.atSeq, "at_seq");
      const op = opContext(ctx);
      const parent = await host.placer.session(session, op);
      const metaBytes = Math.max(
        0,
        ...Array.from({ length: count }, (_, i) =>
          checkMetadata(limits, `fork child ${i}'s name, labels and annotations`, {
            name: req.childNames[i] ?? "",
            labels: req.labels,
            annotations: parent.annotations,
          }),
        ),
      );
      await checkForkBytes(host, session, atSeq, count, metaBytes);
      const children: SessionMetaInput[] = Array.from({ length: count }, (_, i) => ({
        uid: newSessionUid(),
        project: parent.project,
        name: req.childNames[i] ?? "",
        harness: parent.harness,
        model: parent.model,
        labels: { ...req.labels },
        annotations: { ...parent.annotations },
        ...(parent.origin ? { origin: parent.origin } : {}),
      }));
      const res = await host.placer.fork({ parent: session, atSeq, children, signal: ctx.signal, ctx: op });
      return create(ForkResponseSchema, { children: res.children.map(sessionProto) });
    },
  };
}
