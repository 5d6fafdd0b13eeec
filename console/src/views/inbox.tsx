// The Inbox: every turn of the project that waits for a person, with the tool call's arguments, who
// asked for the turn and the turn's context, decided in place. Invariants: the list is ListWaiting's,
// read to the end of the project (each call looks at a bounded number of sessions), and re-read after
// every decision; who asked is the actor of the turn's EXECUTION_START as the host journaled it (a name
// it verified reads "by", one a client only asserted "claimed by"), shown only when the context holds
// that record, never guessed.
import { useCallback, useEffect, useState } from "preact/hooks";
import type { WaitingTurn } from "../../../src/gen/harnesshost/v1/console_pb.js";
import { type ApiError, sessions, views } from "../api.js";
import { actorText, summaryOf } from "../records.js";
import { turnOf } from "../state.js";
import { ErrorBox, Link, attempt, useVisibleInterval } from "../ui.js";
import { Decision } from "./decision.js";

const REFRESH_MS = 5000;
/** Calls per refresh at most (each looks at up to 500 sessions). */
const MAX_CALLS = 40;

export function InboxView() {
  const [project, setProject] = useState("");
  const [waiting, setWaiting] = useState<WaitingTurn[] | undefined>();
  const [decided, setDecided] = useState<string[]>([]);
  const [error, setError] = useState<ApiError | undefined>();

  const load = useCallback(async () => {
    const all = await attempt(async () => {
      const out: WaitingTurn[] = [];
      let token = "";
      for (let i = 0; i < MAX_CALLS; i++) {
        const res = await views.listWaiting({ project, pageToken: token });
        out.push(...res.waiting);
        token = res.nextPageToken;
        if (token === "") break;
      }
      return out;
    }, setError);
    if (all === undefined) return;
    setError(undefined);
    setWaiting(all);
  }, [project]);

  useEffect(() => {
    void load();
  }, [load]);
  useVisibleInterval(load, REFRESH_MS);

  const resume = async (uid: string): Promise<void> => {
    const res = await attempt(() => sessions.resume({ session: uid }), setError);
    if (res !== undefined) setDecided(decided.filter((d) => d !== uid));
    await load();
  };

  return (
    <section>
      <h2>Inbox</h2>
      <div class="filters">
        <label>
          Project <input value={project} placeholder="default" onChange={(e) => setProject(e.currentTarget.value)} />
        </label>
        <button type="button" onClick={() => void load()}>
          Refresh
        </button>
      </div>
      <ErrorBox error={error} onRetry={() => void load()} />
      {decided.length > 0 ? (
        <div class="notice" data-testid="decided">
          {decided.map((uid) => (
            <div key={uid} class="row">
              Decided <Link to={["session", uid]}>{uid}</Link> — the turn continues when resumed.
              <button type="button" class="primary" onClick={() => void resume(uid)}>
                Resume
              </button>
            </div>
          ))}
        </div>
      ) : null}
      {waiting !== undefined && waiting.length === 0 ? <p class="muted">Nothing waits for a person.</p> : null}
      <div data-testid="inbox">
        {(waiting ?? []).map((w) => {
          const s = w.session;
          const uid = s?.metadata?.uid ?? "";
          if (s === undefined) return null;
          const start = w.context.find((r) => r.event?.body.case === "executionStart");
          const askedBy = start === undefined ? undefined : actorText(start);
          return (
            <article class="card" key={uid} data-uid={uid}>
              <header>
                <Link to={["session", uid]}>{uid}</Link> · {s.harness} · waiting for {turnOf(s)?.wait ?? "a decision"}
                {askedBy !== undefined ? (
                  <span class="actor" data-testid="asked-by">
                    {" "}
                    · turn asked {askedBy}
                  </span>
                ) : null}
              </header>
              <details>
                <summary>Turn context ({w.context.length} records)</summary>
                <ul class="context">
                  {w.context.map((r) => (
                    <li key={String(r.seq)}>
                      <span class="mono">{String(r.seq)}</span> {summaryOf(r)}
                    </li>
                  ))}
                </ul>
              </details>
              <Decision
                session={s}
                {...(w.toolCall ? { call: w.toolCall } : {})}
                onDone={() => {
                  setDecided([...decided.filter((d) => d !== uid), uid]);
                  void load();
                }}
              />
            </article>
          );
        })}
      </div>
    </section>
  );
}
