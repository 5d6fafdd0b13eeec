// The harness registry: static harnesses (built in or configured at start-up) and harnesses
// registered at runtime. Invariant: a name resolves to one entry; static names can never be
// registered over; a retired harness still serves its existing sessions; a name this host does not
// know yet is looked up once (refresh) before it is refused, so a registration made on another host
// sharing the database is served without a restart.
import { ErrorCode, HostError } from "../errors/index.js";
import type { HarnessEntry, HarnessResolver } from "./harness-entry.js";

export class HarnessRegistry implements HarnessResolver {
  private readonly entries = new Map<string, HarnessEntry>();
  private loader: ((name: string) => Promise<void>) | undefined;

  constructor(readonly defaultName: string) {}

  /** Sets how an unknown name is looked up (the server's catalog reloads stored registrations). */
  onUnknown(loader: (name: string) => Promise<void>): void {
    this.loader = loader;
  }

  /** Loads `name` through the lookup set by onUnknown when it is not known here; a no-op otherwise. */
  async refresh(name: string): Promise<void> {
    const wanted = name || this.defaultName;
    if (this.entries.has(wanted) || !this.loader) return;
    await this.loader(wanted);
  }

  addStatic(entry: Omit<HarnessEntry, "source" | "state">): void {
    if (this.entries.has(entry.name))
      throw new HostError(ErrorCode.AlreadyExists, `harness "${entry.name}" is configured twice`);
    this.entries.set(entry.name, { ...entry, source: "static", state: "active" });
  }

  /** Adds or replaces a registered (non-static) entry. */
  putRegistered(entry: Omit<HarnessEntry, "source">): void {
    const existing = this.entries.get(entry.name);
    if (existing?.source === "static")
      throw new HostError(ErrorCode.AlreadyExists, `"${entry.name}" is a static harness`);
    this.entries.set(entry.name, { ...entry, source: "registered" });
  }

  get(name: string): HarnessEntry | undefined {
    return this.entries.get(name);
  }

  resolve(name: string): HarnessEntry {
    const entry = this.entries.get(name || this.defaultName);
    if (!entry) {
      throw new HostError(
        ErrorCode.InvalidArgument,
        `unknown harness "${name}"; this host serves: ${[...this.entries.keys()].sort().join(", ")}`,
      );
    }
    return entry;
  }

  /** Resolves a harness for a new session: retired harnesses are refused. */
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

  all(): HarnessEntry[] {
    return this.names().map((n) => this.entries.get(n)!);
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.entries.values()].map((e) => e.runtime.close()));
  }
}
