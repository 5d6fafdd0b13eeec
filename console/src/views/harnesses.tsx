// The Harnesses view: the registry's entries (read-only over HTTP) with where each comes from (built in,
// a module given to serve --harness, a node address — Console.ListHarnessOrigins for the ones the host
// was started with, the spec for registered ones), tier, runtime, version and reachability as the host
// observes them. Invariant: reachability is asked of the host per entry (GetHarness observe=true) and a
// failure to observe is shown, never hidden.
import { useCallback, useEffect, useState } from "preact/hooks";
import {
  HarnessSource,
  HarnessState,
  type HarnessRegistration,
} from "../../../src/gen/agentsessions/v1/harness_registry_pb.js";
import type { HarnessOrigin } from "../../../src/gen/harnesshost/v1/console_pb.js";
import { Resumability } from "../../../src/gen/agentsessions/v1/harness_pb.js";
import { type ApiError, registry, views } from "../api.js";
import { ErrorBox, attempt } from "../ui.js";

/** Where a harness comes from and how it runs, in an operator's words. */
interface Origin {
  /** built-in, serve --harness (configured at start-up) or registered. */
  readonly source: string;
  /** in the host's process, a node process the host spawns, a remote node, a VM, … */
  readonly runtime: string;
  /** The module path, node address or image directory ("" for a built-in). */
  readonly where: string;
}

const RUNTIME_WORDS: Readonly<Record<string, string>> = {
  local: "in-process",
  spawned: "spawned node",
  remote: "remote node",
  vm: "microVM",
};

function originOf(h: HarnessRegistration, configured: HarnessOrigin | undefined): Origin {
  if (h.source === HarnessSource.STATIC) {
    if (configured === undefined) return { source: "configured", runtime: "", where: "" };
    return {
      source: configured.builtin ? "built-in" : "serve --harness",
      runtime: RUNTIME_WORDS[configured.runtime] ?? configured.runtime,
      where: configured.module || configured.address,
    };
  }
  const p = h.spec?.placement;
  switch (p?.case) {
    case "remote":
      return { source: "registered", runtime: "remote node", where: p.value.address };
    case "substrate":
      return { source: "registered", runtime: "substrate", where: `${p.value.atespace}/${p.value.template}` };
    case undefined:
      return { source: "registered", runtime: "", where: "" };
    default: {
      const exhaustive: never = p;
      return { source: "registered", runtime: String(exhaustive), where: "" };
    }
  }
}

export function HarnessesView() {
  const [list, setList] = useState<HarnessRegistration[] | undefined>();
  const [origins, setOrigins] = useState<readonly HarnessOrigin[]>([]);
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
    const configured = await attempt(() => views.listHarnessOrigins({}), setError);
    if (configured === undefined) return;
    setError(undefined);
    setList(all);
    setOrigins(configured.origins);
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
            <th>Module or address</th>
            <th>Version</th>
            <th>Reachability</th>
          </tr>
        </thead>
        <tbody>
          {(list ?? []).map((h) => {
            const name = h.metadata?.name ?? "";
            const version = h.observed?.version ?? "";
            const configured =
              origins.find((o) => o.name === name && o.version === version) ??
              origins.find((o) => o.name === name && o.version === "");
            const { source, runtime, where } = originOf(h, configured);
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
                <td>{source}</td>
                <td>{tier}</td>
                <td>{runtime}</td>
                <td class="mono small">{where || <span class="muted">—</span>}</td>
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
