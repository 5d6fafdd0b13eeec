// The journal as a timeline, one window of records at a time (Replay from_seq..to_seq): a 10,000-record
// session costs one window of payloads, never all of them. Invariant: each row shows the stored record
// (seq, kind, time, summary) with its full payload one click away, and tool calls name the seqs of
// their approval request, decision and result when those are in the window.
import { useCallback, useEffect, useState } from "preact/hooks";
import type { LogRecord } from "../../../src/gen/agentsessions/v1/common_pb.js";
import { type ApiError, sessions } from "../api.js";
import {
  actorText,
  type CallLinks,
  callIdOf,
  forkPoints,
  kindLabel,
  kindOf,
  linksOf,
  payloadJson,
  summaryOf,
} from "../records.js";
import { ErrorBox, attempt, time } from "../ui.js";

export const WINDOW = 100;

function pairing(rec: LogRecord, links: Map<string, CallLinks>): string {
  const id = callIdOf(rec);
  if (id === undefined) return "";
  const l = links.get(`${rec.event?.executionId ?? ""}/${id}`);
  if (l === undefined) return "";
  const parts: string[] = [];
  if (l.call !== undefined && l.call !== rec.seq) parts.push(`call @${l.call}`);
  if (l.request !== undefined && l.request !== rec.seq) parts.push(`approval asked @${l.request}`);
  if (l.decision !== undefined && l.decision !== rec.seq)
    parts.push(`${l.approved ? "approved" : "denied"} @${l.decision}`);
  if (l.result !== undefined && l.result !== rec.seq) parts.push(`result @${l.result}`);
  return parts.join(" · ");
}

export function Timeline({
  uid,
  head,
  running,
  badSeq,
  onFork,
  onLoaded,
}: {
  uid: string;
  head: number;
  /** A turn is running: the head is not a resting point to fork at. */
  running: boolean;
  badSeq?: number;
  /** Forks at a seq; absent when the principal may not fork (no Fork here is offered). */
  onFork: ((seq: number) => void) | undefined;
  /** Called after each window is on screen. */
  onLoaded?: () => void;
}) {
  // The window's last seq; undefined follows the head.
  const [end, setEnd] = useState<number | undefined>(undefined);
  const [records, setRecords] = useState<LogRecord[]>([]);
  const [error, setError] = useState<ApiError | undefined>();
  const to = Math.min(end ?? head, head);
  const from = Math.max(1, to - WINDOW + 1);

  const load = useCallback(async () => {
    if (head === 0) {
      setRecords([]);
      onLoaded?.();
      return;
    }
    const got = await attempt(async () => {
      const out: LogRecord[] = [];
      for await (const rec of sessions.replay({ session: uid, fromSeq: BigInt(from), toSeq: BigInt(to) }))
        out.push(rec);
      return out;
    }, setError);
    if (got === undefined) return;
    setError(undefined);
    setRecords(got);
    onLoaded?.();
  }, [uid, from, to, head, onLoaded]);

  useEffect(() => {
    void load();
  }, [load]);

  const links = linksOf(records);
  const forks = forkPoints(records, { head, running });
  return (
    <section class="timeline">
      <div class="pager">
        <button type="button" disabled={from <= 1} onClick={() => setEnd(Math.max(WINDOW, from - 1))}>
          ← Earlier
        </button>
        <span data-testid="window">
          seq {head === 0 ? 0 : from}–{to} of {head}
        </span>
        <button type="button" disabled={to >= head} onClick={() => setEnd(Math.min(head, to + WINDOW))}>
          Later →
        </button>
        <button type="button" disabled={end === undefined} onClick={() => setEnd(undefined)}>
          Latest
        </button>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            const n = Number(new FormData(e.currentTarget).get("seq"));
            if (Number.isInteger(n) && n >= 1) setEnd(Math.min(head, n + WINDOW - 1));
          }}
        >
          <input name="seq" size={6} placeholder="go to seq" />
        </form>
      </div>
      <ErrorBox error={error} onRetry={() => void load()} />
      <table class="records" data-testid="timeline">
        <thead>
          <tr>
            <th class="num">Seq</th>
            <th>Kind</th>
            <th>Time</th>
            <th>Record</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {records.map((rec) => {
            const seq = Number(rec.seq);
            const pair = pairing(rec, links);
            const fork = forks.get(seq);
            return (
              <tr key={seq} data-seq={seq} data-kind={kindOf(rec)} class={badSeq === seq ? "bad" : ""}>
                <td class="num mono">{seq}</td>
                <td>
                  <span class={`kind kind-${kindOf(rec)}`}>{kindLabel(rec)}</span>
                </td>
                <td class="mono small">{rec.event?.ts ? time(rec.event.ts) : <span class="muted">—</span>}</td>
                <td>
                  <details>
                    <summary>
                      {summaryOf(rec)}
                      {actorText(rec) !== undefined ? (
                        <span class="actor" data-testid="actor">
                          {" "}
                          — {actorText(rec)}
                        </span>
                      ) : null}
                      {pair ? <span class="pair"> ({pair})</span> : null}
                    </summary>
                    <pre class="payload">{payloadJson(rec)}</pre>
                  </details>
                </td>
                <td>
                  {fork !== undefined && onFork !== undefined ? (
                    <button type="button" class="small" title={`${fork} (at seq ${seq})`} onClick={() => onFork(seq)}>
                      Fork here
                    </button>
                  ) : null}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </section>
  );
}
