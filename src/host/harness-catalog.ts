// Registered harnesses of one host: the stored rows (journal) joined with what this host can serve
// (the placement registry). Invariants: registrations are immutable (one spec digest per name, ever);
// a row is stored before its harness becomes servable, and becomes servable right after, without a
// restart — on this host at once, on other hosts sharing the journal at their next sync (on the first
// call naming it, and every few seconds); static names can never be registered; register, retire and
// sync are serialized per host.
import { Resumability } from "../gen/agentsessions/v1/harness_pb.js";
import { randomBytes } from "node:crypto";
import { create, fromJsonString } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { ErrorCode, HostError, invalidArgument as invalid } from "../errors/index.js";
import {
  HarnessRegistrationSchema,
  HarnessSource,
  HarnessSpecSchema,
  HarnessState,
  RegisterOutcome,
  type HarnessRegistration,
  type HarnessSpec,
} from "../gen/agentsessions/v1/harness_registry_pb.js";
import { BUILTIN_STATICS, type Host } from "./host.js";
import { buildRuntime } from "./runtimes.js";
import type { StoredRegistration } from "../journal/types.js";
import { DESCRIBE_TIMEOUT_MS } from "../placement/admission.js";
import type { HarnessEntry } from "../placement/harness-entry.js";
import type { Runtime } from "../runtime/types.js";
import { HARNESS_NAME, checkName, checkSpec, servablePlacement } from "./harness-spec.js";
import { splitVersionKey, VERSION_LABEL } from "../placement/registry.js";
import { pinnedDigests, pinnedSessions } from "../versions/pins.js";

/** A registration name: an RFC 1123 label, optionally `@version` (docs/versioning.md); returns the label. */
function checkVersionedName(key: string): string {
  const { name, version } = splitVersionKey(key);
  checkName(name);
  if (version !== undefined && !VERSION_LABEL.test(version))
    throw invalid(
      `version ${JSON.stringify(version)} is not 1-64 of A-Z a-z 0-9 . _ - (starting with a letter or digit)`,
    );
  return name;
}

export const DEFAULT_HARNESS_PAGE = 50;
export const MAX_HARNESS_PAGE = 500;
export const MAX_RETIRE_REASON_BYTES = 1024;
/** How often a host sharing its journal re-reads the stored registrations (ms). */
export const REGISTRATION_POLL_MS = 2_000;

/** Runs async sections one at a time. */
class Mutex {
  private tail: Promise<unknown> = Promise.resolve();
  run<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.tail.then(fn, fn);
    this.tail = next.catch(() => undefined);
    return next;
  }
}

/** One version of a harness as `harness list` shows it (harnesshost.v1.HarnessVersion). */
export interface HarnessVersionInfo {
  readonly name: string;
  /** "" for an unversioned entry. */
  readonly version: string;
  readonly source: "static" | "registered";
  readonly state: "active" | "retired";
  readonly isDefault: boolean;
  readonly pinnedSessions: readonly string[];
  /** The build this host serves for the version ("" unknown; docs/versioning.md). */
  readonly buildDigest: string;
  /** The distinct build digests its pinned sessions' last turns recorded. */
  readonly pinnedDigests: readonly string[];
}

export interface HarnessPage {
  readonly harnesses: HarnessRegistration[];
  readonly nextPageToken: string;
}

export class HarnessCatalog {
  private readonly lock = new Mutex();
  /** Why a stored row is not served here (host-local, never stored). */
  private readonly unservable = new Map<string, string>();
  private poll: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(private readonly host: Host) {}

  /** Makes every stored registration servable (start-up); rows that cannot be served are isolated. */
  async load(): Promise<void> {
    await this.sync();
  }

  /**
   * Brings this host in line with the stored rows: a row not served here yet (registered by another
   * host sharing the journal) becomes servable; a served row takes the stored state (retired or
   * reactivated elsewhere). Rows that cannot be served are isolated with their reason.
   */
  sync(): Promise<void> {
    return this.lock.run(async () => {
      if (this.stopped) return;
      const rows = await this.host.journal.listRegistrations();
      const stored = new Set(rows.map((r) => r.name));
      // A registration freed on another host sharing the journal stops being served here too.
      for (const entry of this.host.registry.all()) {
        const key = entry.version === undefined ? entry.name : `${entry.name}@${entry.version}`;
        if (entry.source === "registered" && !stored.has(key)) {
          await this.host.registry.removeRegistered(key);
          this.unservable.delete(key);
        }
      }
      for (const row of rows) {
        if (this.isStatic(splitVersionKey(row.name).name)) {
          this.unservable.set(row.name, "the name is a static harness on this host");
          continue;
        }
        const current = this.registered(row.name);
        if (current && (current.registrationUid === undefined || current.registrationUid === row.uid)) {
          if (current.state !== row.state)
            this.host.registry.putRegistered({ ...entryFields(current), state: row.state });
          continue;
        }
        // Freed and registered again on another host: the old registration's runtime goes.
        if (current) await this.host.registry.removeRegistered(row.name);
        try {
          const spec = decodeSpec(row.spec);
          if (!spec) throw new HostError(ErrorCode.FailedPrecondition, "the stored spec cannot be decoded");
          const checked = checkSpec(spec);
          const runtime = await this.buildPlaced(row.name, checked.spec);
          this.serve(row.name, runtime, checked.spec, row.state, row);
          this.unservable.delete(row.name);
        } catch (err) {
          this.unservable.set(row.name, err instanceof Error ? err.message : String(err));
        }
      }
    });
  }

  /**
   * Follows registrations made on other hosts: a Sessions call naming an unknown harness syncs first,
   * and (intervalMs > 0) a background sync runs every intervalMs; its timer never holds the process.
   */
  follow(intervalMs: number): void {
    this.host.registry.onUnknown(() => this.sync());
    if (intervalMs > 0 && !this.poll) {
      this.poll = setInterval(() => void this.sync().catch(() => undefined), intervalMs);
      this.poll.unref();
    }
  }

  /** Stops following and waits for a sync in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.poll) clearInterval(this.poll);
    this.poll = undefined;
    await this.lock.run(async () => undefined);
  }

  async register(
    name: string,
    spec: HarnessSpec | undefined,
  ): Promise<{ harness: HarnessRegistration; outcome: RegisterOutcome }> {
    const base = checkVersionedName(name);
    if (this.isStatic(base)) throw new HostError(ErrorCode.AlreadyExists, `"${base}" is a static harness name`);
    const checked = checkSpec(spec);
    return this.lock.run(async () => {
      const existing = await this.host.journal.getRegistration(name);
      if (existing && existing.specDigest !== checked.digest) {
        throw new HostError(
          ErrorCode.AlreadyExists,
          `harness "${name}" is registered with a different spec; registrations are immutable: use a new name, or release this one (\`harnesshost harness retire --name ${name}\`, then \`harnesshost harness free --name ${name}\`)`,
        );
      }
      servablePlacement(checked.spec);
      const current = this.registered(name);
      const runtime = current?.runtime ?? (await this.buildPlaced(name, checked.spec));
      const now = Date.now();
      let outcome: RegisterOutcome;
      let row: StoredRegistration;
      if (!existing) {
        outcome = RegisterOutcome.CREATED;
        row = {
          name,
          uid: `harness-${randomBytes(12).toString("hex")}`,
          spec: checked.canonical,
          specDigest: checked.digest,
          state: "active",
          retireReason: "",
          retiredAtMs: 0,
          createdAtMs: now,
          updatedAtMs: now,
        };
      } else if (existing.state === "retired") {
        outcome = RegisterOutcome.REACTIVATED;
        row = { ...existing, state: "active", retireReason: "", retiredAtMs: 0, updatedAtMs: now };
      } else {
        outcome = RegisterOutcome.UNCHANGED;
        row = existing;
      }
      try {
        if (row !== existing) await this.host.journal.putRegistration(row);
      } catch (err) {
        if (!current) await runtime.close().catch(() => undefined);
        throw err;
      }
      this.serve(name, runtime, checked.spec, "active", row);
      this.unservable.delete(name);
      return { harness: this.registrationOf(row), outcome };
    });
  }

  async get(name: string, observe: boolean, signal: AbortSignal): Promise<HarnessRegistration> {
    if (name === "") throw invalid("name is required");
    const entry = this.host.registry.get(name);
    let reg: HarnessRegistration;
    if (entry?.source === "static" && !name.includes("@")) reg = staticRegistration(entry);
    else {
      const row = await this.host.journal.getRegistration(name);
      if (!row) throw new HostError(ErrorCode.NotFound, `harness "${name}" not found`);
      reg = this.registrationOf(row);
    }
    if (observe) await observeInto(reg, entry, signal);
    return reg;
  }

  async list(pageSize: number, pageToken: string, includeRetired: boolean): Promise<HarnessPage> {
    if (pageSize < 0) throw invalid(`page_size must be ≥ 0, got ${pageSize}`);
    const size = pageSize === 0 ? DEFAULT_HARNESS_PAGE : Math.min(pageSize, MAX_HARNESS_PAGE);
    const after = decodeNameToken(pageToken);
    const statics = this.host.registry
      .all()
      .filter((e) => e.source === "static")
      .map(staticRegistration);
    const rows = (await this.host.journal.listRegistrations())
      .filter((r) => !this.isStatic(r.name) && (includeRetired || r.state !== "retired"))
      .map((r) => this.registrationOf(r));
    const all = [...statics, ...rows]
      .sort((a, b) => compareNames(nameOf(a), nameOf(b)))
      .filter((r) => after === undefined || compareNames(nameOf(r), after) > 0);
    const page = all.slice(0, size);
    const last = page.at(-1);
    return {
      harnesses: page,
      nextPageToken: all.length > size && last ? Buffer.from(nameOf(last), "utf8").toString("base64url") : "",
    };
  }

  async retire(name: string, reason: string, force = false): Promise<HarnessRegistration> {
    if (name === "") throw invalid("name is required");
    if (Buffer.byteLength(reason, "utf8") > MAX_RETIRE_REASON_BYTES)
      throw invalid(`reason is longer than ${MAX_RETIRE_REASON_BYTES} bytes`);
    if (this.host.registry.get(name)?.source === "static") {
      throw new HostError(ErrorCode.FailedPrecondition, `"${name}" is a static harness and cannot be retired`);
    }
    return this.lock.run(async () => {
      const row = await this.host.journal.getRegistration(name);
      if (!row) throw new HostError(ErrorCode.NotFound, `harness "${name}" not found`);
      if (row.state === "retired") return this.registrationOf(row);
      const { name: base, version } = splitVersionKey(name);
      if (version !== undefined) {
        // A retired version serves nothing: its pinned sessions would be stranded until upgraded.
        const pinned = ((await pinnedSessions(this.host.journal, base)).get(version) ?? []).map((p) => p.uid);
        if (pinned.length > 0 && !force)
          throw new HostError(
            ErrorCode.FailedPrecondition,
            `harness "${base}" version "${version}" has ${pinned.length} pinned session(s): ${pinned.join(", ")}; upgrade them first (harnesshost upgrade --session S --to-version V) or retire with --force, which leaves them refused until they are upgraded`,
          );
      }
      const now = Date.now();
      const retired: StoredRegistration = {
        ...row,
        state: "retired",
        retireReason: reason,
        retiredAtMs: now,
        updatedAtMs: now,
      };
      await this.host.journal.putRegistration(retired);
      const entry = this.registered(name);
      if (entry) this.host.registry.putRegistered({ ...entryFields(entry), state: "retired" });
      return this.registrationOf(retired);
    });
  }

  /**
   * Frees a retired registration's key (`name` or `name@version`): the stored row is deleted and this
   * host stops serving it (others at their next sync), so the key can be registered again with any
   * spec. The sessions it served keep every record; they never run on a later registration of the key
   * (registration-binding.ts). Active registrations must be retired first; statics cannot be freed.
   */
  async free(key: string): Promise<HarnessRegistration> {
    if (key === "") throw invalid("name is required");
    if (this.isStatic(splitVersionKey(key).name))
      throw new HostError(ErrorCode.FailedPrecondition, `"${key}" is a static harness; its name cannot be freed`);
    return this.lock.run(async () => {
      const row = await this.host.journal.getRegistration(key);
      if (!row) throw new HostError(ErrorCode.NotFound, `harness "${key}" not found`);
      if (row.state !== "retired")
        throw new HostError(
          ErrorCode.FailedPrecondition,
          `harness "${key}" is active; retire it first (\`harnesshost harness retire --name ${key}\`), then free its name`,
        );
      const freed = this.registrationOf(row);
      if (!(await this.host.journal.deleteRegistration(key, row.uid)))
        throw new HostError(ErrorCode.Conflict, `harness "${key}" changed while it was being freed; try again`);
      await this.host.registry.removeRegistered(key);
      this.unservable.delete(key);
      return freed;
    });
  }

  /**
   * Every version of one harness (or, with name "", of every harness) this host serves or has stored,
   * with the sessions pinned to each (docs/versioning.md). An unversioned entry lists the sessions
   * pinned to versions no versioned entry of its name serves.
   */
  async versions(name: string): Promise<HarnessVersionInfo[]> {
    const names = name === "" ? this.host.registry.names() : [splitVersionKey(name).name];
    const out: HarnessVersionInfo[] = [];
    for (const n of names) {
      const entries = this.host.registry.versionsOf(n);
      if (entries.length === 0) {
        if (name !== "") throw new HostError(ErrorCode.NotFound, `harness "${n}" not found`);
        continue;
      }
      const pins = await pinnedSessions(this.host.journal, n);
      const versioned = new Set(entries.flatMap((e) => (e.version !== undefined ? [e.version] : [])));
      const byDefault = this.host.registry.get(n);
      for (const e of entries) {
        const pinned =
          e.version !== undefined
            ? (pins.get(e.version) ?? [])
            : [...pins.entries()].filter(([v]) => !versioned.has(v)).flatMap(([, list]) => list);
        out.push({
          name: n,
          version: e.version ?? "",
          source: e.source,
          state: e.state,
          isDefault: e === byDefault,
          pinnedSessions: pinned.map((p) => p.uid).sort(),
          buildDigest: e.runtime.buildDigest?.() ?? "",
          pinnedDigests: pinnedDigests(pinned),
        });
      }
    }
    return out;
  }

  private isStatic(name: string): boolean {
    return this.host.registry.get(name)?.source === "static" || BUILTIN_STATICS.some((b) => b.name === name);
  }

  /** The registered entry of a key: `name` (its unversioned entry) or `name@version`. */
  private registered(key: string): HarnessEntry | undefined {
    const { name, version } = splitVersionKey(key);
    return this.host.registry.versionsOf(name).find((e) => e.source === "registered" && e.version === version);
  }

  private async buildPlaced(key: string, spec: HarnessSpec): Promise<Runtime> {
    const { runtime, target } = servablePlacement(spec);
    const name = splitVersionKey(key).name;
    return buildRuntime(
      { name, runtime, target, descriptorId: spec.descriptorId, checkpointPolicy: "every-turn" },
      {
        snapshots: this.host.snapshots,
        nodeIdleMs: this.host.config.nodeIdleMs,
        nodeLimits: this.host.limits,
        localActors: this.host.limits.localActors,
      },
    );
  }

  private serve(
    key: string,
    runtime: Runtime,
    spec: HarnessSpec,
    state: "active" | "retired",
    row: StoredRegistration,
  ): void {
    const declaredMemory = spec.capabilities?.resumability === Resumability.REQUIRES_MEMORY_SNAPSHOT;
    const { name, version } = splitVersionKey(key);
    this.host.registry.putRegistered({
      name,
      ...(version !== undefined ? { version } : {}),
      since: row.createdAtMs,
      runtime,
      descriptorId: spec.descriptorId,
      checkpointPolicy: "every-turn",
      state,
      declaredMemory,
      registrationUid: row.uid,
    });
  }

  private registrationOf(row: StoredRegistration): HarnessRegistration {
    const spec = decodeSpec(row.spec);
    const served = this.registered(row.name) !== undefined;
    const unservable = served
      ? ""
      : (this.unservable.get(row.name) ??
        (spec
          ? "registered on another host; served here from this host's next registry sync (the first call naming it, or the periodic one)"
          : "the stored spec cannot be decoded"));
    return create(HarnessRegistrationSchema, {
      metadata: {
        name: row.name,
        uid: row.uid,
        createTime: timestampFromMs(row.createdAtMs),
        updateTime: timestampFromMs(row.updatedAtMs),
      },
      ...(spec ? { spec } : {}),
      specDigest: row.specDigest,
      state: row.state === "retired" ? HarnessState.RETIRED : HarnessState.ACTIVE,
      source: HarnessSource.REGISTERED,
      ...(row.retiredAtMs > 0 ? { retireTime: timestampFromMs(row.retiredAtMs) } : {}),
      retireReason: row.retireReason,
      unservableReason: unservable,
    });
  }
}

function entryFields(e: HarnessEntry): Omit<HarnessEntry, "source"> {
  return {
    name: e.name,
    ...(e.version !== undefined ? { version: e.version } : {}),
    ...(e.since !== undefined ? { since: e.since } : {}),
    runtime: e.runtime,
    descriptorId: e.descriptorId,
    checkpointPolicy: e.checkpointPolicy,
    state: e.state,
    ...(e.declaredMemory ? { declaredMemory: true } : {}),
    ...(e.registrationUid !== undefined ? { registrationUid: e.registrationUid } : {}),
  };
}

function decodeSpec(text: string): HarnessSpec | undefined {
  try {
    return fromJsonString(HarnessSpecSchema, text);
  } catch {
    return undefined;
  }
}

function staticRegistration(entry: HarnessEntry): HarnessRegistration {
  return create(HarnessRegistrationSchema, {
    metadata: { name: entry.name },
    state: HarnessState.ACTIVE,
    source: HarnessSource.STATIC,
  });
}

/** GetHarness{observe}: Describe bounded in time; a failure fills observe_error, never fails the call. */
async function observeInto(
  reg: HarnessRegistration,
  entry: HarnessEntry | undefined,
  signal: AbortSignal,
): Promise<void> {
  if (!entry) {
    reg.observeError = "not served on this host";
    return;
  }
  const bound = AbortSignal.any([signal, AbortSignal.timeout(DESCRIBE_TIMEOUT_MS)]);
  try {
    // Raced as well as passed: a runtime that ignores the signal still cannot hold the call.
    reg.observed = await Promise.race([entry.runtime.describe(bound), aborted(bound)]);
  } catch (err) {
    reg.observeError = err instanceof Error ? err.message : String(err);
  }
}

function aborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    const fail = (): void =>
      reject(new HostError(ErrorCode.Unavailable, `Describe did not answer within ${DESCRIBE_TIMEOUT_MS} ms`));
    if (signal.aborted) fail();
    else signal.addEventListener("abort", fail, { once: true });
  });
}

function nameOf(r: HarnessRegistration): string {
  return r.metadata?.name ?? "";
}

function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** ListHarnesses page token: base64url of the last name returned. */
function decodeNameToken(token: string): string | undefined {
  if (token === "") return undefined;
  const name = /^[A-Za-z0-9_-]+$/.test(token) ? Buffer.from(token, "base64url").toString("utf8") : "";
  const { name: base, version } = splitVersionKey(name);
  const valid = HARNESS_NAME.test(base) && (version === undefined || VERSION_LABEL.test(version));
  if (!valid || Buffer.from(name, "utf8").toString("base64url") !== token) throw invalid("invalid page_token");
  return name;
}
