// The Session view: what the session is (harness, tier, state, head, chain check, lineage, snapshots),
// what it did (the timeline) and what an operator can do to it (run a turn with its output streamed
// as produced, suspend, resume, fork at a seq, decide its pending gate, export JSONL, upgrade to another
// version of its harness). Invariant: after
// every action the view re-reads the session from the host; it never guesses the new state.
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import type { LogRecord } from "../../../src/gen/agentsessions/v1/common_pb.js";
import type { Session } from "../../../src/gen/agentsessions/v1/session_pb.js";
import type { InspectSessionResponse } from "../../../src/gen/harnesshost/v1/console_pb.js";
import { type ApiError, sessions, views } from "../api.js";
import { summaryOf, textOf } from "../records.js";
import { runBlockedBy, stateOf, tierOf, turnOf } from "../state.js";
import { ErrorBox, Link, attempt, go, time } from "../ui.js";
import { Lacks, useCan } from "../principal.js";
import { Decision } from "./decision.js";
import { Timeline } from "./timeline.js";
import { Upgrade } from "./upgrade.js";

/** A turn to start as soon as the Session view of `uid` opens (set by the Sessions view's New form). */
let pendingRun: { uid: string; text: string } | undefined;
export function runOnOpen(uid: string, text: string): void {
  pendingRun = { uid, text };
}

interface LiveTurn {
  text: string;
  lines: string[];
  running: boolean;
  /** The turn ended parked on a gate (read from the session after the stream ended). */
  parked?: boolean;
}

export function SessionView({ uid }: { uid: string }) {
  const [loaded, setSession] = useState<Session | undefined>();
  const [inspected, setInspected] = useState<{ uid: string; view: InspectSessionResponse } | undefined>();
  // The view is reused when the route moves to another session (a fork opens its child): until the new
  // session is read, what is in state belongs to the old one and is not shown, and an answer that
  // arrives for a session no longer on screen is dropped.
  const current = useRef(uid);
  current.current = uid;
  const session = loaded?.metadata?.uid === uid ? loaded : undefined;
  const inspect = inspected?.uid === uid ? inspected.view : undefined;
  const [call, setCall] = useState<LogRecord | undefined>();
  const [error, setError] = useState<ApiError | undefined>();
  const [input, setInput] = useState("");
  const [live, setLive] = useState<LiveTurn | undefined>();
  const [busy, setBusy] = useState("");
  const [exported, setExported] = useState<{ url: string; lines: number } | undefined>();

  const reload = useCallback(async (): Promise<Session | undefined> => {
    const s = await attempt(() => sessions.getSession({ uid }), setError);
    if (s === undefined || current.current !== uid) return undefined;
    setError(undefined);
    setSession(s);
    const gate = s.pendingApproval;
    if (gate !== undefined) {
      const seq = gate.requestSeq;
      const from = seq > 16n ? seq - 15n : 1n;
      const found = await attempt(async () => {
        for await (const rec of sessions.replay({ session: uid, fromSeq: from, toSeq: seq })) {
          const b = rec.event?.body;
          if (b?.case === "tool" && b.value.id === gate.toolCallId && rec.event?.executionId === gate.executionId)
            return rec;
        }
        return undefined;
      }, setError);
      if (current.current === uid) setCall(found);
    } else setCall(undefined);
    return s;
  }, [uid]);

  // The chain check re-reads and re-hashes every record (≈ 0.8 s at 10,000 records on the bench
  // machine): it runs once the first timeline window is on screen, then again only when asked or when
  // the snapshots change (suspend) — not after every action. The badge says which seq it covered.
  const [verifyAsked, setVerifyAsked] = useState(1);
  const [timelineReady, setTimelineReady] = useState(false);
  const timelineLoaded = useCallback(() => setTimelineReady(true), []);
  useEffect(() => {
    if (!timelineReady || verifyAsked === 0) return;
    setVerifyAsked(0);
    void attempt(() => views.inspectSession({ session: uid }), setError).then((i) => {
      if (i !== undefined) setInspected({ uid, view: i });
    });
  }, [uid, timelineReady, verifyAsked]);

  const run = useCallback(
    async (text: string) => {
      setLive({ text, lines: [], running: true });
      let output = "";
      const lines: string[] = [];
      const show = (running: boolean): void => setLive({ text: output, lines: [...lines], running });
      await attempt(async () => {
        const stream = sessions.exec({
          session: uid,
          inputs: [{ role: "user", parts: [{ part: { case: "text", value: { text } } }] }],
        });
        for await (const u of stream) {
          if (u.update.case === "delta") output += u.update.value.chunk;
          else if (u.update.case === "record") {
            const rec = u.update.value;
            lines.push(`${rec.seq} ${summaryOf(rec)}`);
            if (rec.event?.body.case === "message" && rec.event.body.value.role !== "user")
              output = textOf(rec.event.body.value);
          }
          show(true);
        }
      }, setError);
      show(false);
      const after = await reload();
      if (after !== undefined && turnOf(after)?.status === "awaiting") setLive((l) => l && { ...l, parked: true });
      setVerifyAsked((n) => n + 1);
    },
    [uid, reload],
  );

  useEffect(() => {
    setSession(undefined);
    setInspected(undefined);
    setTimelineReady(false);
    setVerifyAsked(1);
    setLive(undefined);
    setExported(undefined);
    void reload();
    if (pendingRun?.uid === uid) {
      const { text } = pendingRun;
      pendingRun = undefined;
      void run(text);
    }
  }, [uid, reload, run]);

  const act = async (name: string, fn: () => Promise<unknown>): Promise<void> => {
    setBusy(name);
    const res = await attempt(fn, setError);
    setBusy("");
    if (res !== undefined) await reload();
  };

  const fork = async (seq: number): Promise<void> => {
    setBusy("fork");
    const res = await attempt(() => sessions.fork({ session: uid, atSeq: BigInt(seq), count: 1 }), setError);
    setBusy("");
    const child = res?.children[0]?.metadata?.uid;
    if (child) go("session", child);
  };

  const exportJsonl = async (): Promise<void> => {
    setBusy("export");
    const text = await attempt(async () => {
      let out = "";
      for await (const chunk of views.exportSession({ session: uid })) out += chunk.jsonl;
      return out;
    }, setError);
    setBusy("");
    if (text === undefined) return;
    if (exported) URL.revokeObjectURL(exported.url);
    const url = URL.createObjectURL(new Blob([text], { type: "application/x-ndjson" }));
    setExported({ url, lines: text.split("\n").length - 1 });
    const a = document.createElement("a");
    a.href = url;
    a.download = `${uid}.jsonl`;
    a.click();
  };

  const head = Number(session?.lastSeq ?? 0n);
  const chain = inspect?.chain;
  const turn = session ? turnOf(session) : undefined;
  const needsResume = turn?.status === "decided" || turn?.status === "interrupted";
  const blocked = live?.running === true ? "a turn is running" : runBlockedBy(turn);
  const can = useCan();
  return (
    <section>
      <p class="crumbs">
        <Link to={["sessions"]}>Sessions</Link> / <span class="mono">{uid}</span>
      </p>
      <ErrorBox error={error} onRetry={() => void reload()} />
      {session ? (
        <div class="summary">
          <h2 class="mono" data-testid="session-uid">
            {uid}
          </h2>
          <dl>
            <dt>Name</dt>
            <dd data-testid="name">{session.metadata?.name ? session.metadata.name : <span class="muted">—</span>}</dd>
            <dt>Harness</dt>
            <dd>{session.harness}</dd>
            <dt>Tier</dt>
            <dd>{tierOf(session)}</dd>
            <dt>State</dt>
            <dd data-testid="state">{stateOf(session)}</dd>
            <dt>Head seq</dt>
            <dd data-testid="head">{head}</dd>
            <dt>Updated</dt>
            <dd>{time(session.metadata?.updateTime)}</dd>
            <dt>Chain</dt>
            <dd>
              {chain === undefined ? (
                <span class="badge">checking…</span>
              ) : chain.ok ? (
                <span class="badge ok" data-testid="chain">
                  ✓ verified · {String(chain.records)} records (through seq {String(chain.headSeq)})
                </span>
              ) : (
                <span class="badge bad" data-testid="chain" data-first-bad-seq={String(chain.firstBadSeq)}>
                  ✗ {chain.failure} at seq {String(chain.firstBadSeq)}
                </span>
              )}{" "}
              {chain !== undefined ? (
                <button type="button" class="small" onClick={() => setVerifyAsked((n) => n + 1)}>
                  Verify again
                </button>
              ) : null}
            </dd>
            <dt>Lineage</dt>
            <dd data-testid="lineage">
              {session.parentUid ? (
                <span>
                  forked from <Link to={["session", session.parentUid]}>{session.parentUid}</Link> at seq{" "}
                  {String(session.forkSeq)}
                </span>
              ) : (
                <span class="muted">root</span>
              )}
              {inspect && inspect.children.length > 0 ? (
                <ul class="children">
                  {inspect.children.map((c) => (
                    <li key={c.metadata?.uid}>
                      child <Link to={["session", c.metadata?.uid ?? ""]}>{c.metadata?.uid}</Link> at seq{" "}
                      {String(c.forkSeq)}
                    </li>
                  ))}
                  {inspect.childrenTruncated ? <li class="muted">… more</li> : null}
                </ul>
              ) : null}
            </dd>
            <dt>Snapshots</dt>
            <dd>
              {inspect && inspect.snapshots.length > 0 ? (
                inspect.snapshots.map((s) => (
                  <div key={s.digest} class="mono small">
                    {s.digest.slice(0, 23)}… · {String(s.sizeBytes)} bytes · seq {String(s.seq)} · {s.tier}
                  </div>
                ))
              ) : (
                <span class="muted">none</span>
              )}
            </dd>
          </dl>
        </div>
      ) : null}
      {session?.pendingApproval ? <Decision session={session} call={call} onDone={() => void reload()} /> : null}
      {session ? (
        <div class="actions">
          {can("session.exec") ? (
            <form
              class="row"
              onSubmit={(e) => {
                e.preventDefault();
                const text = input;
                setInput("");
                void run(text);
              }}
            >
              <input
                name="input"
                placeholder="Input for a new turn"
                value={input}
                disabled={blocked !== undefined}
                onInput={(e) => setInput(e.currentTarget.value)}
              />
              <button type="submit" disabled={blocked !== undefined} title={blocked}>
                Run turn
              </button>
              {blocked !== undefined && live?.running !== true ? (
                <span class="muted" data-testid="run-blocked">
                  {blocked}
                </span>
              ) : null}
            </form>
          ) : (
            <div class="row">
              <Lacks permission="session.exec" what="Run turn" />
            </div>
          )}
          <div class="row">
            {can("session.suspend") ? (
              <button
                type="button"
                disabled={busy !== ""}
                onClick={() =>
                  void act("suspend", () => sessions.suspend({ session: uid })).then(() => setVerifyAsked((n) => n + 1))
                }
              >
                Suspend
              </button>
            ) : null}
            {can("session.resume") ? (
              <button
                type="button"
                class={needsResume ? "primary" : ""}
                disabled={busy !== ""}
                onClick={() => void act("resume", () => sessions.resume({ session: uid }))}
              >
                Resume
              </button>
            ) : null}
            <button type="button" disabled={busy !== ""} onClick={() => void exportJsonl()}>
              Export JSONL
            </button>
            {busy ? <span class="muted">{busy}…</span> : null}
            {exported ? (
              <a href={exported.url} download={`${uid}.jsonl`} data-testid="export-link">
                {uid}.jsonl ({exported.lines} records)
              </a>
            ) : null}
          </div>
          {can("session.upgrade") ? (
            <div class="row">
              <Upgrade key={uid} session={session} onDone={() => void reload()} />
            </div>
          ) : null}
        </div>
      ) : null}
      {live ? (
        <div class="live" data-testid="live">
          <div class="live-head">
            {live.running
              ? "turn running…"
              : live.parked
                ? "turn parked: waiting for a person (decide above, then resume)"
                : "turn finished"}
          </div>
          <pre data-testid="live-output">{live.text}</pre>
          <details>
            <summary>{live.lines.length} records streamed</summary>
            <pre>{live.lines.join("\n")}</pre>
          </details>
        </div>
      ) : null}
      {session ? (
        <Timeline
          uid={uid}
          head={head}
          running={turn?.status === "running" || live?.running === true}
          badSeq={chain && !chain.ok ? Number(chain.firstBadSeq) : undefined}
          onFork={can("session.fork") ? (seq) => void fork(seq) : undefined}
          onLoaded={timelineLoaded}
        />
      ) : null}
    </section>
  );
}
