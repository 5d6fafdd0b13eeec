// The harness registry: static harnesses (built in or configured at start-up) and harnesses
// registered at runtime, each name with one or more versions side by side. Invariant: a name resolves
// to one entry per version; the default for new sessions is the newest active version; a session
// pinned to a version runs on that version while it is served and is refused (never moved silently)
// when it is not; static names can never be registered over; a retired unversioned harness still
// serves its existing sessions, a retired version serves nothing; a name this host does not know yet is
// looked up once (refresh) before it is refused, so a registration made on another host sharing the
// database is served without a restart.
import { ErrorCode, HostError } from "../errors/index.js";
import type { HarnessEntry, HarnessResolver } from "./harness-entry.js";

/** What a registration version label may be: short, printable, no separators the key form uses. */
export const VERSION_LABEL = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** `name` or `name@version`: the key a versioned registration is stored and addressed under. */
export function versionKey(name: string, version: string | undefined): string {
  return version === undefined ? name : `${name}@${version}`;
}

/** Splits a registration key into its name and (when present) version. */
export function splitVersionKey(key: string): { name: string; version?: string } {
  const at = key.indexOf("@");
  return at < 0 ? { name: key } : { name: key.slice(0, at), version: key.slice(at + 1) };
}

export class HarnessRegistry implements HarnessResolver {
  /** name → its entries (one per version; at most one unversioned). */
  private readonly entries = new Map<string, HarnessEntry[]>();
  private loader: ((name: string) => Promise<void>) | undefined;
  private added = 0;

  constructor(readonly defaultName: string) {}

  /** Sets how an unknown name is looked up (the host's catalog, src/host/harness-catalog.ts, reloads stored registrations). */
  onUnknown(loader: (name: string) => Promise<void>): void {
    this.loader = loader;
  }

  /** Loads `name` through the lookup set by onUnknown when it is not known here; a no-op otherwise. */
  async refresh(name: string): Promise<void> {
    const wanted = name || this.defaultName;
    if (this.entries.has(splitVersionKey(wanted).name) || !this.loader) return;
    await this.loader(wanted);
  }

  addStatic(entry: Omit<HarnessEntry, "source" | "state">): void {
    const versions = this.entries.get(entry.name) ?? [];
    if (versions.some((e) => e.version === undefined || e.version === entry.version || entry.version === undefined))
      throw new HostError(
        ErrorCode.AlreadyExists,
        `harness "${versionKey(entry.name, entry.version)}" is configured twice`,
      );
    this.entries.set(entry.name, [
      ...versions,
      { ...entry, since: entry.since ?? this.added++, source: "static", state: "active" },
    ]);
  }

  /** Adds or replaces a registered (non-static) entry: the one with the same name and version. */
  putRegistered(entry: Omit<HarnessEntry, "source">): void {
    const versions = this.entries.get(entry.name) ?? [];
    if (versions.some((e) => e.source === "static"))
      throw new HostError(ErrorCode.AlreadyExists, `"${entry.name}" is a static harness`);
    const others = versions.filter((e) => e.version !== entry.version);
    this.entries.set(entry.name, [...others, { ...entry, since: entry.since ?? Date.now(), source: "registered" }]);
  }

  /** Stops serving the registered entry of a key (`name` or `name@version`) and closes its runtime. */
  async removeRegistered(key: string): Promise<void> {
    const { name, version } = splitVersionKey(key);
    const versions = this.entries.get(name) ?? [];
    const gone = versions.find((e) => e.source === "registered" && e.version === version);
    if (!gone) return;
    const rest = versions.filter((e) => e !== gone);
    if (rest.length > 0) this.entries.set(name, rest);
    else this.entries.delete(name);
    await gone.runtime.close().catch(() => undefined);
  }

  /** The entry of a key: `name` (its default entry) or `name@version` (exactly that version). */
  get(key: string): HarnessEntry | undefined {
    const { name, version } = splitVersionKey(key);
    const versions = this.entries.get(name);
    if (!versions) return undefined;
    if (version !== undefined) return versions.find((e) => e.version === version);
    return newest(versions, false) ?? newest(versions, true);
  }

  /** Every entry of a name, oldest first. */
  versionsOf(name: string): readonly HarnessEntry[] {
    return [...(this.entries.get(name) ?? [])].sort((a, b) => (a.since ?? 0) - (b.since ?? 0));
  }

  resolve(name: string): HarnessEntry {
    const entry = this.get(name || this.defaultName);
    if (!entry) {
      throw new HostError(
        ErrorCode.InvalidArgument,
        `unknown harness "${name}"; this host serves: ${this.names().join(", ")}`,
      );
    }
    return entry;
  }

  /**
   * The entry a session runs its next turn on. Pinned to a version of this name: that version while it
   * is served (active); an unversioned entry (whose Describe admission then checks); otherwise refused
   * with the command that moves the session. Not pinned (no turn yet, or another name): the default.
   */
  resolvePinned(
    name: string,
    pinned: { readonly harness: string; readonly version: string } | undefined,
    session: string,
  ): HarnessEntry {
    const wanted = name || this.defaultName;
    const versions = this.entries.get(wanted);
    if (!versions || pinned === undefined || pinned.harness !== wanted || pinned.version === "")
      return this.resolve(name);
    const exact = versions.find((e) => e.version === pinned.version && e.state === "active");
    if (exact) return exact;
    const unversioned = versions.find((e) => e.version === undefined);
    if (unversioned) return unversioned;
    const served = versions.filter((e) => e.state === "active" && e.version !== undefined).map((e) => e.version);
    const target = newest(versions, false)?.version;
    throw new HostError(
      ErrorCode.FailedPrecondition,
      `session ${session} is pinned to harness "${wanted}" version "${pinned.version}", which this host does not serve (versions served: ${served.join(", ") || "none"})${target !== undefined ? `; move it with \`harnesshost upgrade --session ${session} --to-version ${target}\`` : ""}`,
    );
  }

  /** The active entry serving `version` of `name`: that version's, else an unversioned one. */
  resolveVersion(name: string, version: string): HarnessEntry | undefined {
    const versions = this.entries.get(name || this.defaultName) ?? [];
    return (
      versions.find((e) => e.version === version && e.state === "active") ??
      versions.find((e) => e.version === undefined)
    );
  }

  /** Resolves a harness for a new session: retired harnesses are refused; the newest active version. */
  resolveForNewSession(name: string): HarnessEntry {
    const entry = this.resolve(name);
    if (entry.state === "retired")
      throw new HostError(
        ErrorCode.FailedPrecondition,
        `harness "${entry.name}" is retired; existing sessions keep running but new ones are refused`,
      );
    return entry;
  }

  names(): string[] {
    return [...this.entries.keys()].sort();
  }

  /** Every entry, by name and then version age. */
  all(): HarnessEntry[] {
    return this.names().flatMap((n) => this.versionsOf(n));
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.all().map((e) => e.runtime.close()));
  }
}

/** The newest entry (greatest `since`) that is active, or (retired = true) of any state. */
function newest(versions: readonly HarnessEntry[], retired: boolean): HarnessEntry | undefined {
  let best: HarnessEntry | undefined;
  for (const e of versions) {
    if (!retired && e.state !== "active") continue;
    if (!best || (e.since ?? 0) >= (best.since ?? 0)) best = e;
  }
  return best;
}
