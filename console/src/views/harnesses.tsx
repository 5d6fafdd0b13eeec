// The Harnesses view: the registry's entries (read-only over HTTP) with tier, runtime, address, version
// and reachability as the host observes them. Invariant: reachability is asked of the host per entry
// (GetHarness observe=true) and a failure to observe is shown, never hidden.
import { useCallback, useEffect, useState } from "preact/hooks";
import {
  HarnessSource,
  HarnessState,
  type HarnessRegistration,
} from "../../../src/gen/agentsessions/v1/harness_registry_pb.js";
import { Resumability } from "../../../src/gen/agentsessions/v1/harness_pb.js";
import { type ApiError, registry } from "../api.js";
import { ErrorBox, attempt } from "../ui.js";

function placement(h: HarnessRegistration): { runtime: string; address: string } {
  const p = h.spec?.placement;
  // A built-in (serve --harness or the defaults) carries no registered spec: the host places it itself.
  if (p === undefined || p.case === undefined)
    return { runtime: h.source === HarnessSource.STATIC ? "built-in" : "", address: "" };
  switch (p.case) {
    case "remote":
      return { runtime: "remote", address: p.value.address };
    default:
      return { runtime: p.case, address: JSON.stringify(p.value) };
  }
}

export function HarnessesView() {
  const [list, setList] = useState<HarnessRegistration[] | undefined>();
  const [error, setError] = useState<ApiError | undefined>();
  const load = useCallback(async () => {
    const all = await attempt(async () => {
      const out: HarnessRegistration[] = [];
      let token = "";
      do {
        const res = await registry.listHarnesses({ pageSize: 100, pageToken: token, includeRetired: true });
        out.push(...res.harnesses);
        token = res.nextPageToken;
      } while (token !== "");
      return Promise.all(
        out.map(async (h) => {
          try {
            return await registry.getHarness({ name: h.metadata?.name ?? "", observe: true });
          } catch {
            return h;
          }
        }),
      );
    }, setError);
    if (all === undefined) return;
    setError(undefined);
    setList(all);
  }, []);
  useEffect(() => {
    void load();
  }, [load]);
  return (
    <section>
      <h2>Harnesses</h2>
      <button type="button" onClick={() => void load()}>
        Refresh
      </button>
      <ErrorBox error={error} onRetry={() => void load()} />
      <table class="list" data-testid="harnesses">
        <thead>
          <tr>
            <th>Name</th>
            <th>Source</th>
            <th>Tier</th>
            <th>Runtime</th>
            <th>Address</th>
            <th>Version</th>
            <th>Reachability</th>
          </tr>
        </thead>
        <tbody>
          {(list ?? []).map((h) => {
            const { runtime, address } = placement(h);
            const resumability = h.observed?.capabilities?.resumability ?? h.spec?.capabilities?.resumability;
            const tier =
              resumability === Resumability.REQUIRES_MEMORY_SNAPSHOT
                ? "memory"
                : resumability === Resumability.STATELESS_REPLAY
                  ? "stateless"
                  : "";
            return (
              <tr key={h.metadata?.name}>
                <td>{h.metadata?.name}</td>
                <td>{h.source === HarnessSource.STATIC ? "static" : "registered"}</td>
                <td>{tier}</td>
                <td>{runtime}</td>
                <td class="mono small">{address}</td>
                <td>{h.observed?.version ?? ""}</td>
                <td>
                  {h.state === HarnessState.RETIRED ? (
                    <span class="badge">retired</span>
                  ) : h.observeError ? (
                    <span class="badge bad" title={h.observeError}>
                      unreachable: {h.observeError}
                    </span>
                  ) : h.unservableReason ? (
                    <span class="badge bad">{h.unservableReason}</span>
                  ) : h.observed ? (
                    <span class="badge ok">reachable</span>
                  ) : (
                    <span class="muted">not observed</span>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </section>
  );
}
