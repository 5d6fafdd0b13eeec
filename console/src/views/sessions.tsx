// The Sessions view: one page of harnesshost.v1.Console.ListSessions at a time (keyset paging: the host
// never sends more than a page, whatever the session count), filtered by project, tier and harness on
// the host — so a filter reaches every matching session, not just those of the page on screen —
// refreshed while the tab is visible. Invariant: only the current page is held in memory; changing a
// filter starts again from the first page (a cursor is only valid with the filters it was made with).
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import type { Session } from "../../../src/gen/agentsessions/v1/session_pb.js";
import { type ApiError, registry, sessions, views } from "../api.js";
import type { TurnStatusWord } from "../../../src/wire/annotations.js";
import { TIERS, stateOf, tierOf } from "../state.js";
import { ErrorBox, Link, attempt, go, time, useVisibleInterval } from "../ui.js";
import { Lacks, useCan } from "../principal.js";
import { runOnOpen } from "./session.js";

export const PAGE_SIZE = 50;
const REFRESH_MS = 5000;

/** The State filter: the words the State column shows, as the host's turn statuses they stand for. */
const TURN_FILTERS: readonly { label: string; turns: readonly TurnStatusWord[] }[] = [
  { label: "waiting", turns: ["awaiting"] },
  { label: "needs resume", turns: ["decided", "interrupted"] },
  { label: "running", turns: ["running"] },
  { label: "failed", turns: ["invalid"] },
  { label: "new", turns: ["new"] },
  { label: "completed", turns: ["completed"] },
];

/** One of the list's filters: "any" or one of `options`; picking one calls `onPick` with it ("" for any). */
function FilterSelect(p: {
  label: string;
  name: string;
  value: string;
  options: readonly string[];
  onPick: (value: string) => void;
}) {
  return (
    <label>
      {p.label}{" "}
      <select name={p.name} value={p.value} onChange={(e) => p.onPick(e.currentTarget.value)}>
        <option value="">any</option>
        {p.options.map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
    </label>
  );
}

export function SessionsView() {
  const [project, setProject] = useState("");
  const [state, setState] = useState("");
  const [turn, setTurn] = useState("");
  const [harness, setHarness] = useState("");
  // tokens[i] is the cursor of page i; the last entry is the current page's.
  const [tokens, setTokens] = useState<string[]>([""]);
  const [page, setPage] = useState<{ list: Session[]; next: string } | undefined>();
  const [error, setError] = useState<ApiError | undefined>();
  const current = tokens[tokens.length - 1] ?? "";

  const [harnessNames, setHarnessNames] = useState<string[]>([]);
  const namesRead = useRef(false);

  // Only the newest request's answer is shown: a slow page for filters since changed is dropped.
  const latest = useRef(0);
  const load = useCallback(async () => {
    const mine = ++latest.current;
    const res = await attempt(
      () =>
        views.listSessions({
          project,
          pageSize: PAGE_SIZE,
          pageToken: current,
          harness,
          states: state === "" ? [] : [state],
          turns: [...(TURN_FILTERS.find((f) => f.label === turn)?.turns ?? [])],
        }),
      setError,
    );
    if (res === undefined || mine !== latest.current) return;
    setError(undefined);
    setPage({ list: res.sessions, next: res.nextPageToken });
    // The harness filter offers the registry's names; read once the host answers (the token is right).
    if (!namesRead.current) {
      namesRead.current = true;
      const reg = await attempt(() => registry.listHarnesses({ pageSize: 100 }), setError);
      setHarnessNames((reg?.harnesses ?? []).map((h) => h.metadata?.name ?? "").filter((n) => n !== ""));
    }
  }, [project, current, harness, state, turn]);

  useEffect(() => {
    void load();
  }, [load]);
  useVisibleInterval(load, REFRESH_MS);

  const shown = page?.list ?? [];
  // Registered harnesses, and any a listed session names (a session keeps a retired harness's name).
  const harnesses = [
    ...new Set([...harnessNames, ...shown.map((s) => s.harness), ...(harness ? [harness] : [])]),
  ].sort();

  /** A filter change: the new value, and the list starts again from its first page. */
  const refilter = (set: (value: string) => void) => (value: string) => {
    set(value);
    setTokens([""]);
  };

  return (
    <section>
      <h2>Sessions</h2>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          setTokens([""]);
        }}
      >
        <label>
          Project{" "}
          <input
            name="project"
            value={project}
            placeholder="default"
            onChange={(e) => {
              setProject(e.currentTarget.value);
              setTokens([""]);
            }}
          />
        </label>
        <FilterSelect label="Tier" name="state" value={state} options={TIERS} onPick={refilter(setState)} />
        <FilterSelect
          label="State"
          name="turn"
          value={turn}
          options={TURN_FILTERS.map((f) => f.label)}
          onPick={refilter(setTurn)}
        />
        <FilterSelect
          label="Harness"
          name="harness"
          value={harness}
          options={harnesses}
          onPick={refilter(setHarness)}
        />
        <button type="button" onClick={() => void load()}>
          Refresh
        </button>
      </form>
      <ErrorBox error={error} onRetry={() => void load()} />
      <table class="list" data-testid="sessions">
        <thead>
          <tr>
            <th>Session</th>
            <th>Name</th>
            <th>Harness</th>
            <th>Tier</th>
            <th>State</th>
            <th class="num">Head seq</th>
            <th aria-sort="descending" title="The host lists sessions newest first">
              Created ↓
            </th>
          </tr>
        </thead>
        <tbody>
          {shown.map((s) => {
            const uid = s.metadata?.uid ?? "";
            return (
              <tr key={uid} data-uid={uid}>
                <td class="mono">
                  <Link to={["session", uid]}>{uid}</Link>
                </td>
                <td>{s.metadata?.name ? s.metadata.name : <span class="muted">—</span>}</td>
                <td>{s.harness}</td>
                <td>{tierOf(s)}</td>
                <td>
                  <span class={`state state-${stateOf(s).replace(" ", "-")}`}>{stateOf(s)}</span>
                </td>
                <td class="num">{String(s.lastSeq)}</td>
                <td>{time(s.metadata?.createTime)}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {page !== undefined && shown.length === 0 ? <p class="muted">No sessions match.</p> : null}
      <div class="pager">
        <button type="button" disabled={tokens.length <= 1} onClick={() => setTokens(tokens.slice(0, -1))}>
          ← Previous
        </button>
        <span data-testid="page">Page {tokens.length}</span>
        <button
          type="button"
          disabled={!page || page.next === ""}
          onClick={() => page && setTokens([...tokens, page.next])}
        >
          Next →
        </button>
      </div>
    </section>
  );
}

/** Start a session: CreateSession with the chosen harness, then its first turn streams in its view. */
export function NewSession() {
  const can = useCan();
  if (!can("session.create"))
    return (
      <p class="new-session row">
        <Lacks permission="session.create" what="New session" />
      </p>
    );
  return <NewSessionForm />;
}

function NewSessionForm() {
  const [names, setNames] = useState<string[]>([]);
  const [harness, setHarness] = useState("");
  const [name, setName] = useState("");
  const [text, setText] = useState("");
  const [error, setError] = useState<ApiError | undefined>();
  useEffect(() => {
    void attempt(async () => {
      const res = await registry.listHarnesses({ pageSize: 100 });
      const list = res.harnesses.map((h) => h.metadata?.name ?? "").filter((n) => n !== "");
      setNames(list);
      setHarness((h) => h || (list.includes("echo") ? "echo" : (list[0] ?? "")));
    }, setError);
  }, []);
  return (
    <form
      class="new-session row"
      onSubmit={async (e) => {
        e.preventDefault();
        const s = await attempt(() => sessions.createSession({ session: { harness, metadata: { name } } }), setError);
        const uid = s?.metadata?.uid;
        if (!uid) return;
        if (text !== "") runOnOpen(uid, text);
        go("session", uid);
      }}
    >
      <strong>New session</strong>
      <select name="harness" value={harness} onChange={(e) => setHarness(e.currentTarget.value)}>
        {names.map((n) => (
          <option key={n} value={n}>
            {n}
          </option>
        ))}
      </select>
      <input name="name" placeholder="Name (optional)" value={name} onInput={(e) => setName(e.currentTarget.value)} />
      <input
        name="first-input"
        placeholder="First input"
        value={text}
        onInput={(e) => setText(e.currentTarget.value)}
      />
      <button type="submit" class="primary">
        Create and run
      </button>
      {/* A missing or wrong token is already shown once, by the list below. */}
      <ErrorBox error={error?.auth ? undefined : error} />
    </form>
  );
}
