// The vm runtime: each session's actor is a whole guest (a QEMU micro-VM booted from a harness image)
// whose harness node is reached over gRPC through a forwarded loopback port. Memory snapshots are
// whole-VM snapshots (QMP migrate, zstd) stored as blobs in the content-addressed snapshot store.
// Invariants: capabilities are honest (memorySnapshot=true: all guest RAM round-trips, any language);
// one VM serves exactly one session; a fresh actor is a restore of the image's base snapshot (booted
// once, never served a turn), started lazily at its first turn; every restored or forked guest has its
// clock, kernel RNG and language runtimes' generators reseeded before it serves; a VM whose QEMU died
// is reported lost (status NONE).
import { forkActor } from "./fork.js";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { HarnessDescriptor } from "../gen/agentsessions/v1/harness_pb.js";
import { ErrorCode, HostError } from "../errors/index.js";
import type { ComputeStateName } from "../journal/types.js";
import { DEFAULT_NODE_LIMITS, type VmLimits } from "../node/limits.js";
import { RemoteHarness } from "../node/remote-harness.js";
import type { EventSink, Harness, StartInfo } from "../harness/types.js";
import type { SnapshotStore } from "../snapshot/store.js";
import { type AccelChoice, chooseAccel } from "../vm/accel.js";
import { type BaseSnapshot, baseSnapshot } from "../vm/base.js";
import { type Image, openImage } from "../vm/image-manifest.js";
import { DEFAULT_DEADLINES, type VmDeadlines, VmProcess } from "../vm/qemu.js";
import {
  NO_CAPABILITIES,
  type ForkOptions,
  type Incarnation,
  type OwnedProcess,
  type Runtime,
  type RuntimeCapabilities,
  type SessionSpec,
  type SnapshotKind,
  type SnapshotRef,
} from "./types.js";
import { memoryRef } from "../snapshot/ref.js";
import { DEFAULT_LIMITS, overLimit } from "../limits/index.js";
import { clipForLog, lazyChild, type Log } from "../obs/op-log.js";

export interface VmRuntimeOptions {
  /** The image directory (`harnesshost image build --out`). */
  readonly image: string;
  readonly snapshots: SnapshotStore;
  /** Where base snapshots are kept between processes; default beside the image cache. */
  readonly baseDir?: string;
  readonly deadlines?: VmDeadlines;
  /** Bounds of each session's snapshot (vmSnapshotBytes, vmSnapshotMs) and of guests at once (vmGuests). */
  readonly limits?: VmLimits;
  /** The runtime's own logger (harness, runtime bound): guest boots, snapshots, restores, exits. */
  readonly log?: Log;
}

const ms = (since: number): number => Math.round(performance.now() - since);

const MEMORY: RuntimeCapabilities = { ...NO_CAPABILITIES, memorySnapshot: true };

/** One session's guest and the harness handle turns run against. */
interface Placed {
  vm: VmProcess | undefined;
  starting: Promise<VmProcess> | undefined;
  readonly harness: VmHarness;
}

/** The harness of one session's guest; the guest is started (from the base snapshot) at first use. */
class VmHarness implements Harness {
  private remote: RemoteHarness | undefined;
  private remoteFor: VmProcess | undefined;

  constructor(
    private readonly runtime: VmRuntime,
    private readonly session: string,
    private readonly vm: () => Promise<VmProcess>,
  ) {}

  describe(): Promise<HarnessDescriptor> {
    return this.runtime.describe();
  }

  async run(start: StartInfo, sink: EventSink, signal: AbortSignal): Promise<void> {
    const vm = await this.vm();
    if (this.remoteFor !== vm) {
      this.remote?.close();
      const log = this.runtime.log;
      this.remote = new RemoteHarness({
        address: vm.address,
        session: this.session,
        ...(log !== undefined
          ? { log: lazyChild(log, () => ({ session: clipForLog(this.session, DEFAULT_LIMITS.logFieldChars) })) }
          : {}),
      });
      this.remoteFor = vm;
    }
    const remote = this.remote;
    if (!remote) throw new HostError(ErrorCode.Internal, "vm harness has no connection");
    return remote.run(start, sink, signal);
  }

  close(): void {
    this.remote?.close();
    this.remote = undefined;
    this.remoteFor = undefined;
  }
}

export class VmRuntime implements Runtime {
  readonly name = "vm";
  readonly accel: AccelChoice;
  private readonly placed = new Map<string, Placed>();
  private readonly work = mkdtempSync(join(tmpdir(), "hh-vmrt-"));
  private image: Promise<Image> | undefined;
  private base: Promise<BaseSnapshot> | undefined;
  private readonly deadlines: VmDeadlines;
  private closed = false;
  readonly log: Log | undefined;

  constructor(private readonly opts: VmRuntimeOptions) {
    this.log = opts.log;
    this.accel = chooseAccel();
    this.deadlines = opts.deadlines ?? DEFAULT_DEADLINES;
  }

  private openImage(): Promise<Image> {
    this.image ??= openImage(this.opts.image);
    return this.image;
  }

  /** The image's base snapshot (a guest booted until its harness answered), made once. */
  baseSnapshot(): Promise<BaseSnapshot> {
    this.base ??= (async () => {
      const began = performance.now();
      const base = await baseSnapshot(await this.openImage(), this.accel, {
        ...(this.opts.baseDir !== undefined ? { dir: this.opts.baseDir } : {}),
        deadlines: this.deadlines,
      });
      this.log?.info({ accel: this.accel.accel, duration_ms: ms(began) }, "vm base snapshot ready");
      return base;
    })();
    this.base.catch(() => {
      this.base = undefined;
    });
    return this.base;
  }

  async capabilities(): Promise<RuntimeCapabilities> {
    return MEMORY;
  }

  async describe(): Promise<HarnessDescriptor> {
    return (await this.baseSnapshot()).descriptor;
  }

  /** The QEMU process serving a session, for crash tests and diagnostics. */
  processOf(sessionUid: string): OwnedProcess | undefined {
    return this.guest(sessionUid);
  }

  /** The running guest of a session (undefined before its first turn or after it died). */
  guest(sessionUid: string): VmProcess | undefined {
    const vm = this.placed.get(sessionUid)?.vm;
    return vm?.alive ? vm : undefined;
  }

  /** The logger of a line about one placement: the operation's (plus runtime), else the runtime's own. */
  private lineLog(opLog: Log | undefined): Log | undefined {
    return opLog !== undefined ? opLog.child({ runtime: this.name }) : this.log;
  }

  /** Guests started and not yet exited, and guests being started now: what vmGuests counts. */
  private readonly guests = new Set<VmProcess>();
  private startingGuests = 0;

  /**
   * vmGuests: refuses to start a guest for `session` when the runtime already runs (or is starting) as
   * many as the limit allows; the session's own guest, which the new one replaces, is not counted.
   */
  private checkGuestRoom(session: string): void {
    const limit = (this.opts.limits ?? DEFAULT_NODE_LIMITS).vmGuests;
    const own = this.placed.get(session)?.vm;
    const running = this.startingGuests + this.guests.size - (own !== undefined && this.guests.has(own) ? 1 : 0);
    if (running >= limit) throw overLimit("vmGuests", limit, running + 1, "vm guests this harness would run at once");
  }

  private async startVm(session: string, file: string, from: "base" | "snapshot", opLog?: Log): Promise<VmProcess> {
    if (this.closed) throw new HostError(ErrorCode.Unavailable, "vm runtime is closed");
    const image = await this.openImage();
    this.checkGuestRoom(session);
    const began = performance.now();
    this.startingGuests++;
    const vm = await VmProcess.start(image, this.accel, { kind: "restore", file }, this.deadlines)
      .catch((err: unknown) => {
        this.lineLog(opLog)?.warn(
          { from, reason: clipForLog(err instanceof Error ? err.message : String(err), 512) },
          "vm failed to start",
        );
        throw err;
      })
      .finally(() => {
        this.startingGuests--;
      });
    this.guests.add(vm);
    void vm.exited.then(() => this.guests.delete(vm));
    this.lineLog(opLog)?.info(
      { pid: vm.pid, from, boot_ms: ms(began), runtimes_reseeded: vm.runtimesReseeded },
      "vm started",
    );
    if (vm.runtimesReseeded === undefined)
      this.lineLog(opLog)?.warn(
        { pid: vm.pid },
        "vm image predates the runtime reseed hooks: its Node/Python generators repeat across copies until it is rebuilt (image build)",
      );
    return vm;
  }

  /** Places `vm` (or, when undefined, a lazily started fresh guest) as the session's actor. */
  private place(session: string, origin: Incarnation["origin"], vm: VmProcess | undefined): Incarnation {
    const old = this.placed.get(session);
    if (old?.vm && old.vm !== vm) void old.vm.stop();
    old?.harness.close();
    const entry: Placed = {
      vm,
      starting: undefined,
      harness: new VmHarness(this, session, () => this.vmOf(session, entry)),
    };
    this.placed.set(session, entry);
    if (vm) this.watch(session, entry, vm);
    return {
      sessionUid: session,
      runtime: this.name,
      worker: vm ? `pid:${vm.pid}` : "vm:pending",
      address: vm?.address ?? "",
      origin,
      harness: entry.harness,
    };
  }

  private watch(session: string, entry: Placed, vm: VmProcess): void {
    void vm.exited.then(() => {
      // A guest that died takes its RAM with it: the session's actor is lost, never silently revived.
      const unexpected = this.placed.get(session) === entry && entry.vm === vm && !this.closed;
      const log = this.log;
      if (log?.isLevelEnabled(unexpected ? "warn" : "info"))
        log[unexpected ? "warn" : "info"](
          {
            session: clipForLog(session, DEFAULT_LIMITS.logFieldChars),
            pid: vm.pid,
            code: vm.child.exitCode,
            signal: vm.child.signalCode,
          },
          "vm exited",
        );
      if (unexpected) {
        entry.harness.close();
        this.placed.delete(session);
      }
    });
  }

  private async vmOf(session: string, entry: Placed): Promise<VmProcess> {
    if (entry.vm) {
      if (!entry.vm.alive)
        throw new HostError(ErrorCode.Internal, `vm of session ${session} exited (QEMU pid ${entry.vm.pid})`);
      return entry.vm;
    }
    entry.starting ??= (async () => {
      const vm = await this.startVm(session, (await this.baseSnapshot()).file, "base");
      if (this.placed.get(session) !== entry || this.closed) {
        await vm.stop();
        throw new HostError(ErrorCode.FailedPrecondition, `session ${session} was stopped while its vm started`);
      }
      entry.vm = vm;
      this.watch(session, entry, vm);
      return vm;
    })();
    entry.starting.catch(() => {
      entry.starting = undefined;
    });
    return entry.starting;
  }

  async create(spec: SessionSpec): Promise<Incarnation> {
    const existing = this.placed.get(spec.sessionUid);
    if (existing && (existing.vm === undefined || existing.vm.alive)) {
      const vm = existing.vm;
      return {
        sessionUid: spec.sessionUid,
        runtime: this.name,
        worker: vm ? `pid:${vm.pid}` : "vm:pending",
        address: vm?.address ?? "",
        origin: vm ? "attached" : "created",
        harness: existing.harness,
      };
    }
    return this.place(spec.sessionUid, "created", undefined);
  }

  async snapshot(sessionUid: string, kind: SnapshotKind, signal?: AbortSignal, log?: Log): Promise<SnapshotRef> {
    void signal;
    if (kind === "LOCAL")
      throw new HostError(ErrorCode.FailedPrecondition, "vm: warm (LOCAL) snapshots are not supported; use EXTERNAL");
    const entry = this.placed.get(sessionUid);
    if (!entry)
      throw new HostError(ErrorCode.FailedPrecondition, `vm: session ${sessionUid} has no live guest to snapshot`);
    // A session that never ran a turn has a fresh guest's state: its vm starts now, so the blob is real.
    const vm = await this.vmOf(sessionUid, entry);
    const file = join(this.work, `snap-${randomBytes(8).toString("hex")}.zst`);
    const began = performance.now();
    try {
      const limits = this.opts.limits ?? DEFAULT_NODE_LIMITS;
      await vm.snapshotTo(file, this.deadlines, {
        maxBytes: limits.vmSnapshotBytes,
        ms: limits.vmSnapshotMs,
        what: `session ${sessionUid}`,
      });
      const bytes = await readFile(file);
      const digest = await this.opts.snapshots.put(bytes);
      this.lineLog(log)?.info({ pid: vm.pid, bytes: bytes.byteLength, duration_ms: ms(began) }, "vm snapshot taken");
      return memoryRef(sessionUid, digest);
    } catch (err) {
      this.lineLog(log)?.warn(
        {
          pid: vm.pid,
          duration_ms: ms(began),
          reason: clipForLog(err instanceof Error ? err.message : String(err), 512),
        },
        "vm snapshot failed",
      );
      throw err;
    } finally {
      rmSync(file, { force: true });
    }
  }

  async restore(ref: SnapshotRef, spec: SessionSpec): Promise<Incarnation> {
    if (!ref.memory) return this.create(spec);
    // Read (and verify) the blob before starting anything: a corrupt blob changes nothing.
    const began = performance.now();
    const bytes = await this.opts.snapshots.get(ref.externalUri);
    const file = join(this.work, `restore-${randomBytes(8).toString("hex")}.zst`);
    try {
      await writeFile(file, bytes);
      const vm = await this.startVm(spec.sessionUid, file, "snapshot", spec.log);
      this.lineLog(spec.log)?.info({ pid: vm.pid, bytes: bytes.byteLength, duration_ms: ms(began) }, "vm restored");
      return this.place(spec.sessionUid, "restored", vm);
    } finally {
      rmSync(file, { force: true });
    }
  }

  async fork(ref: SnapshotRef, opts: ForkOptions): Promise<Incarnation> {
    return forkActor(this, ref, opts);
  }

  async ephemeral(): Promise<{ harness: Harness; release(): Promise<void> }> {
    const key = `replay-${randomBytes(8).toString("hex")}`;
    const inc = this.place(key, "created", undefined);
    return { harness: inc.harness, release: () => this.stop(key) };
  }

  async stop(sessionUid: string): Promise<void> {
    const entry = this.placed.get(sessionUid);
    if (!entry) return;
    this.placed.delete(sessionUid);
    entry.harness.close();
    const vm = entry.vm ?? (await entry.starting?.catch(() => undefined));
    await vm?.stop();
  }

  async status(sessionUid: string): Promise<ComputeStateName> {
    const entry = this.placed.get(sessionUid);
    return entry && (entry.vm === undefined || entry.vm.alive) ? "LIVE" : "NONE";
  }

  async close(): Promise<void> {
    this.closed = true;
    const sessions = [...this.placed.keys()];
    await Promise.all(sessions.map((s) => this.stop(s)));
    rmSync(this.work, { recursive: true, force: true });
  }
}
