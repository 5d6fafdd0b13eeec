// The Session view's "Upgrade to version…" action: the registered versions of the session's harness
// (ListVersions), the one the session is pinned to, and Upgrade to a chosen one. Invariants: the pinned
// version shown is the host's answer (re-read after every upgrade, never assumed from the request); a
// refused upgrade shows the host's message and, for a replay that diverged, the first divergent seq;
// the versions are read only when the operator opens the action (ListVersions folds every session's log).
import { useState } from "preact/hooks";
import type { Session } from "../../../src/gen/agentsessions/v1/session_pb.js";
import type { HarnessVersion } from "../../../src/gen/harnesshost/v1/versions_pb.js";
import { type ApiError, apiError, harnessVersions, upgrades } from "../api.js";
import { ErrorBox, attempt } from "../ui.js";

/** The first divergent seq a refused upgrade names (docs/versioning.md), if it is a divergence. */
export function divergentSeq(error: ApiError): number | undefined {
  if (error.code !== "failed_precondition") return undefined;
  const m = /diverged at seq (\d+)/.exec(error.message);
  return m?.[1] === undefined ? undefined : Number(m[1]);
}

interface Outcome {
  readonly from: string;
  readonly to: string;
  readonly seq: bigint;
  readonly replayed: bigint;
}

export function Upgrade({ session, onDone }: { session: Session; onDone: () => void }) {
  const uid = session.metadata?.uid ?? "";
  const [open, setOpen] = useState(false);
  const [list, setList] = useState<HarnessVersion[] | undefined>();
  const [target, setTarget] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | undefined>();
  const [refused, setRefused] = useState<{ error: ApiError; seq: number } | undefined>();
  const [done, setDone] = useState<Outcome | undefined>();

  const readVersions = async (): Promise<void> => {
    const res = await attempt(() => harnessVersions.listVersions({ name: session.harness }), setError);
    if (res === undefined) return;
    setList(res.versions);
    const pin = res.versions.find((v) => v.pinnedSessions.includes(uid));
    const other = res.versions.find((v) => v.state === "active" && v !== pin);
    setTarget((t) => t || other?.version || "");
  };

  const upgrade = async (): Promise<void> => {
    setBusy(true);
    setError(undefined);
    setRefused(undefined);
    setDone(undefined);
    try {
      const r = await upgrades.upgrade({ session: uid, toVersion: target });
      setDone({ from: r.fromVersion, to: r.toVersion, seq: r.upgradeSeq, replayed: r.replayedTurns });
    } catch (err) {
      const e = apiError(err);
      const seq = divergentSeq(e);
      if (seq !== undefined) setRefused({ error: e, seq });
      else setError(e);
    }
    setBusy(false);
    onDone();
    await readVersions();
  };

  if (!open)
    return (
      <button
        type="button"
        onClick={() => {
          setOpen(true);
          void readVersions();
        }}
      >
        Upgrade to version…
      </button>
    );
  const pinned = list?.find((v) => v.pinnedSessions.includes(uid));
  const active = (list ?? []).filter((v) => v.state === "active");
  return (
    <div class="upgrade" data-testid="upgrade">
      <strong>Upgrade</strong>{" "}
      <span>
        pinned to{" "}
        <span class="mono" data-testid="pinned-version">
          {list === undefined ? "…" : (pinned?.version ?? "none (no turn yet)")}
        </span>
      </span>{" "}
      <select name="to-version" value={target} onChange={(e) => setTarget(e.currentTarget.value)}>
        {active.map((v) => (
          <option key={v.version} value={v.version}>
            {v.version}
            {v.isDefault ? " (default)" : ""}
          </option>
        ))}
      </select>{" "}
      <button type="button" class="primary" disabled={busy || target === ""} onClick={() => void upgrade()}>
        Upgrade
      </button>{" "}
      <button type="button" onClick={() => setOpen(false)}>
        Close
      </button>
      {list !== undefined && active.length === 0 ? (
        <p class="muted">{session.harness} has no registered versions.</p>
      ) : null}
      {done ? (
        <p data-testid="upgrade-done">
          {done.seq === 0n
            ? `already on ${done.to}: nothing written`
            : `upgraded from ${done.from || "none"} to ${done.to} at seq ${done.seq} (${done.replayed} turns replayed)`}
        </p>
      ) : null}
      {refused ? (
        <div class="error" data-testid="upgrade-refused" data-divergent-seq={refused.seq}>
          Refused: the replay under {target} diverged at seq {refused.seq}; the session stays on its version.
          <div class="mono small">
            {refused.error.code}: {refused.error.message}
          </div>
        </div>
      ) : null}
      <ErrorBox error={error} />
    </div>
  );
}
