// The upgrade checks of both tiers (docs/versioning.md): the subject runs as version "1" of a name, a
// compatible and an incompatible "2" are served beside it, and a session driven on "1" is upgraded.
// Invariants: the incompatible upgrade is refused and leaves the journal (head, hashes, fence) exactly
// as it was, and the session then continues like the control twin on "1"; the compatible upgrade
// passes and the next turn continues like the control twin on "2". The three versions are the
// subject's own factory, served by in-process nodes; the wrappers add only non-enumerable properties,
// so the actor's captured state is the subject's.
import { join } from "node:path";
import type { Host } from "../../host/host.js";
import { buildRuntime, loadHarnessFactory } from "../../host/runtimes.js";
import { serveHarness, type HarnessNode } from "../../node/index.js";
import type { Runtime } from "../../runtime/types.js";
import type { EventSink, Harness, HarnessFactory } from "../../harness/types.js";
import type { SuiteEnv } from "../env.js";
import { errText, fail, q } from "../evidence.js";
import type { Tier } from "../types.js";
import {
  continuesLikeControl,
  ErrorCode,
  expectRefusal,
  journalState,
  pass,
  skip,
  unchanged,
  type Check,
} from "./check.js";

/** The registry name the versions are served under. */
const VERSIONED = "subject-versions";
const MARK = "conformance: incompatible";

/** Sets a non-enumerable own property (never part of a snapshot, §9.1). */
function hide(target: object, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: false, writable: true, configurable: true });
}

/** The subject reporting `version` (its behaviour unchanged). */
function asVersion(factory: HarnessFactory, version: string, extra?: (h: Harness) => void): HarnessFactory {
  return () => {
    const h = factory();
    const describe = h.describe.bind(h);
    hide(h, "describe", async () => ({ ...(await describe()), version }));
    extra?.(h);
    return h;
  };
}

/** Stateless incompatibility: every turn first says something the recorded turns never did. */
function sayingMore(h: Harness): void {
  const run = h.run.bind(h);
  hide(h, "run", async (start: Parameters<Harness["run"]>[0], sink: EventSink, signal: AbortSignal) => {
    await sink.output(MARK, signal);
    await run(start, sink, signal);
  });
}

interface Versions {
  readonly host: Host;
  readonly nodes: HarnessNode[];
  readonly memory: boolean;
  readonly compatible: Runtime;
  readonly incompatible: Runtime;
}

/** A host serving the subject as version "1" of VERSIONED, and runtimes of the two "2"s (not yet served). */
async function serveVersions(env: SuiteEnv, tier: Tier): Promise<Versions | undefined> {
  if (env.target.kind !== "builtin" && env.target.kind !== "module") return undefined;
  const factory = await loadHarnessFactory(env.target.value);
  const compatible = asVersion(factory, "2", (h) =>
    // Memory: the state of "1" is the state of "2" (identity migration).
    hide(h, "migrate", (state: Record<string, unknown>, from: string) => (from === "1" ? state : undefined)),
  );
  const incompatible =
    tier === "stateless"
      ? asVersion(factory, "2", sayingMore)
      : asVersion(factory, "2", (h) => hide(h, "migrate", () => undefined));
  const host = await env.openHost();
  const dir = env.dataDirOf(host);
  const nodes: HarnessNode[] = [];
  const runtimes: Runtime[] = [];
  for (const [label, f] of [
    ["1", asVersion(factory, "1")],
    ["2", compatible],
    ["2x", incompatible],
  ] as const) {
    const node = await serveHarness(f, { listen: `unix://${join(dir, `v${label}.sock`)}` });
    nodes.push(node);
    runtimes.push(
      await buildRuntime(
        { name: VERSIONED, runtime: "remote", target: node.address, checkpointPolicy: "every-turn", descriptorId: "" },
        { snapshots: host.snapshots, nodeIdleMs: 0, nodeLimits: host.limits },
      ),
    );
  }
  const v: Versions = {
    host,
    nodes,
    memory: tier === "memory",
    compatible: runtimes[1]!,
    incompatible: runtimes[2]!,
  };
  serve(v, "1", runtimes[0]!);
  return v;
}

function serve(v: Versions, version: string, runtime: Runtime): void {
  v.host.registry.putRegistered({
    name: VERSIONED,
    version,
    since: Number.parseInt(version, 10),
    runtime,
    descriptorId: "",
    checkpointPolicy: "every-turn",
    state: "active",
    ...(v.memory ? { declaredMemory: true } : {}),
  });
}

async function closeVersions(env: SuiteEnv, v: Versions): Promise<void> {
  await env.closeHost(v.host);
  await Promise.allSettled([v.compatible.close(), v.incompatible.close()]);
  await Promise.allSettled(v.nodes.map((n) => n.close()));
}

function upgradeCheck(tier: Tier): Check {
  return {
    id: `${tier}.upgrade`,
    tier,
    title:
      tier === "stateless"
        ? "An incompatible version 2 is refused at its first divergent seq with nothing changed; a compatible one continues like the control"
        : "A version 2 that cannot migrate the snapshot is refused with nothing changed; one that migrates it continues like the control",
    async run(env) {
      const versions = await serveVersions(env, tier);
      if (!versions)
        return skip(`the upgrade check serves the subject in-process; target ${env.target.kind} is not loadable here`);
      try {
        const { host } = versions;
        const n = env.turns;
        const uid = await env.newSession(host, VERSIONED);
        await host.placer.upgrade(uid, "1", env.signal());
        await env.drive(host, uid, env.range(n));
        serve(versions, "2", versions.incompatible);
        const before = await journalState(host, uid);
        const refused = await expectRefusal(
          "the incompatible upgrade",
          tier === "stateless" ? ErrorCode.Diverged : [ErrorCode.FailedPrecondition, ErrorCode.Diverged],
          () => host.placer.upgrade(uid, "2", env.signal()),
        );
        const same = unchanged("the refused upgrade", before, await journalState(host, uid), { fence: true });
        serve(versions, "2", versions.compatible);
        let up: Awaited<ReturnType<Host["placer"]["upgrade"]>>;
        try {
          up = await host.placer.upgrade(uid, "2", env.signal());
        } catch (err) {
          return fail(`the compatible upgrade was refused: ${errText(err)}`);
        }
        const next = await env.turn(host, uid, n + 1);
        const like = await continuesLikeControl(env, n + 1, next.text);
        return pass(
          `incompatible "2" refused (${refused.slice(0, 160)}); ${same}; compatible "2" upgraded at seq ${up.upgradeSeq}; ${like} (${q(next.text)})`,
        );
      } finally {
        await closeVersions(env, versions);
      }
    },
  };
}

export const statelessUpgrade = upgradeCheck("stateless");
export const memoryUpgrade = upgradeCheck("memory");
