// The suite's environment: real Hosts on temporary data directories serving the harness under test,
// one counting model, and the uninterrupted control twin every continuity check compares against.
// Invariants: every Host and temp dir opened here is closed and removed by close(); the control twin
// is driven with exactly the inputs the checks use and is never suspended, forked or restarted.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { HarnessDescriptor } from "../gen/agentsessions/v1/harness_pb.js";
import { newSessionUid, textMessage, type TurnResult } from "../controller/index.js";
import { Host } from "../host/host.js";
import type { JournalRecord } from "../journal/types.js";
import { modelFromFlag } from "../model/index.js";
import { FsSnapshotStore } from "../snapshot/store.js";
import { CountingModel } from "./counting-model.js";
import { fail, turnText, type Signatures } from "./evidence.js";
import { SUBJECT, subjectSpecs, type Target } from "./target.js";
import type { ConformanceOptions } from "./types.js";

/** The input of turn `i` (1-based): deterministic, so twins see exactly the same conversation. */
export function inputOf(i: number): string {
  return `turn-${i}`;
}

export interface Turn {
  readonly text: string;
  readonly result: TurnResult;
  /** Provider calls the turn made. */
  readonly modelCalls: number;
}

export interface ControlRun {
  /** texts[i] is the output of turn i+1; N+2 turns. */
  readonly texts: readonly string[];
  readonly modelCalls: readonly number[];
  readonly uid: string;
}

export class SuiteEnv {
  readonly model: CountingModel;
  private readonly root: string;
  private readonly hosts = new Map<Host, string>();
  private sharedHost: Host | undefined;
  private controlRun: Promise<ControlRun> | undefined;
  private readonly signatures = new Map<number, Promise<Signatures>>();
  private dirs = 0;

  constructor(
    readonly options: ConformanceOptions,
    readonly target: Target,
  ) {
    this.root = mkdtempSync(join(tmpdir(), "hh-conformance-"));
    this.model = new CountingModel(
      modelFromFlag(options.model, options.modelName !== undefined ? { modelName: options.modelName } : {}),
    );
  }

  get turns(): number {
    return this.options.turns;
  }

  /** A bound on one host operation. */
  signal(): AbortSignal {
    return AbortSignal.timeout(this.options.operationTimeoutMs);
  }

  newDataDir(): string {
    return join(this.root, `host-${++this.dirs}`);
  }

  snapshotDir(dataDir: string): string {
    return join(dataDir, "snapshots");
  }

  /** A Host serving the subject on `dataDir` (a new directory when omitted). */
  async openHost(dataDir = this.newDataDir()): Promise<Host> {
    const host = await Host.open(
      { dataDir, harnesses: subjectSpecs(this.target), defaultHarness: SUBJECT, nodeIdleMs: 30_000 },
      { model: this.model, snapshots: new FsSnapshotStore(this.snapshotDir(dataDir)) },
    );
    this.hosts.set(host, dataDir);
    return host;
  }

  dataDirOf(host: Host): string {
    const dir = this.hosts.get(host);
    if (dir === undefined) throw new Error("host was not opened by this suite");
    return dir;
  }

  async closeHost(host: Host): Promise<void> {
    if (!this.hosts.has(host)) return;
    this.hosts.delete(host);
    if (this.sharedHost === host) this.sharedHost = undefined;
    await host.close();
  }

  /** The host most checks share (sessions isolate them); opened on first use. */
  async shared(): Promise<Host> {
    this.sharedHost ??= await this.openHost();
    return this.sharedHost;
  }

  async describe(): Promise<HarnessDescriptor> {
    const host = await this.shared();
    return host.registry.resolve(SUBJECT).runtime.describe(this.signal());
  }

  async newSession(host: Host, harness = SUBJECT): Promise<string> {
    return (await host.createSession({ harness })).uid;
  }

  /** Runs turn `i` (input `turn-i`) on a session. */
  async turn(host: Host, uid: string, i: number): Promise<Turn> {
    const before = this.model.calls;
    const result = await host.placer.exec({
      session: uid,
      inputs: [textMessage("user", inputOf(i))],
      signal: this.signal(),
    });
    return { text: turnText(result.outputs), result, modelCalls: this.model.calls - before };
  }

  /** Runs turns with the given input numbers, in order. */
  async drive(host: Host, uid: string, inputs: readonly number[]): Promise<Turn[]> {
    const turns: Turn[] = [];
    for (const i of inputs) turns.push(await this.turn(host, uid, i));
    return turns;
  }

  /** Turns 1..n. */
  range(n: number, from = 1): number[] {
    return Array.from({ length: n }, (_, k) => from + k);
  }

  /** The uninterrupted control twin: turns 1..N+2 on one session of the shared host. */
  control(): Promise<ControlRun> {
    this.controlRun ??= (async () => {
      const host = await this.shared();
      const uid = await this.newSession(host);
      const turns = await this.drive(host, uid, this.range(this.turns + 2));
      return { uid, texts: turns.map((t) => t.text), modelCalls: turns.map((t) => t.modelCalls) };
    })();
    return this.controlRun;
  }

  /** The control's output for turn `i` (1-based). */
  async expected(i: number): Promise<string> {
    const control = await this.control();
    const text = control.texts[i - 1];
    if (text === undefined) throw new Error(`the control twin has no turn ${i}`);
    return text;
  }

  /** Cold-boot and double-apply outputs for turn `i`, from twins driven without interruption. */
  signaturesFor(i: number): Promise<Signatures> {
    let sig = this.signatures.get(i);
    if (!sig) {
      sig = (async () => {
        const host = await this.shared();
        const cold = await this.drive(host, await this.newSession(host), [i]);
        const prior = this.range(i - 1);
        const twice = await this.drive(host, await this.newSession(host), [...prior, ...prior, i]);
        return { coldBoot: cold.at(-1)!.text, doubleApplied: twice.at(-1)!.text };
      })();
      this.signatures.set(i, sig);
    }
    return sig;
  }

  async records(host: Host, uid: string): Promise<JournalRecord[]> {
    return host.journal.readRange(uid);
  }

  /** Verifies each session's chain; fails the check naming the first broken one. */
  async verifyChains(host: Host, uids: readonly string[]): Promise<string> {
    let records = 0;
    for (const uid of uids) {
      const v = await host.journal.verify(uid);
      if (!v.ok) fail(`chain of ${uid} does not verify: ${v.kind} at seq ${v.seq}: ${v.message}`);
      records += v.records;
    }
    return uids.length === 1
      ? `chain verifies (${records} records)`
      : `${uids.length} chains verify (${records} records)`;
  }

  async close(): Promise<void> {
    for (const host of [...this.hosts.keys()]) await this.closeHost(host).catch(() => undefined);
    rmSync(this.root, { recursive: true, force: true });
  }

  /** A fresh child uid for forks. */
  childUid(): string {
    return newSessionUid();
  }
}
