// One QEMU process running one guest. Invariants: the process is live only between a successful
// start (booted and answering, or restored, resumed and reseeded) and its exit; it never outlives the
// host (a watchdog holding our pipe kills it when this process dies, and an exit hook kills it on a
// normal exit); a snapshot leaves the guest running exactly where it was.
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { type Socket, connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ErrorCode, HostError } from "../errors/index.js";
import { overLimit } from "../limits/index.js";
import { RemoteHarness } from "../node/remote-harness.js";
import { type AccelChoice, QEMU } from "./accel.js";
import type { Image } from "./image-manifest.js";
import { freePort } from "./ports.js";
import { Qmp, awaitIncoming, awaitMigration } from "./qmp.js";

/** How a guest comes up: a cold boot of the image, or a restore of a snapshot file (zstd). */
export type VmStart = { readonly kind: "boot" } | { readonly kind: "restore"; readonly file: string };

export interface VmDeadlines {
  /** Cold boot until the harness answers Describe (TCG under load is slow). */
  readonly bootMs: number;
  /** Restore until the guest runs and its agent reseeded. */
  readonly restoreMs: number;
  readonly snapshotMs: number;
}

/** The bounds of one session snapshot (limits vmSnapshotBytes and vmSnapshotMs) and what it is of. */
export interface SnapshotBound {
  readonly maxBytes: number;
  readonly ms: number;
  /** For the error message, e.g. "session 0f3…". */
  readonly what: string;
}

/** RESOURCE_EXHAUSTED when the snapshot file went past its bound (it holds at most one byte more). */
function checkSnapshotSize(file: string, bound: SnapshotBound): void {
  let size = 0;
  try {
    size = statSync(file).size;
  } catch {
    return; // nothing written: not a size problem
  }
  if (size > bound.maxBytes)
    throw overLimit("vmSnapshotBytes", bound.maxBytes, undefined, `vm snapshot of ${bound.what} (more than the limit)`);
}

export const DEFAULT_DEADLINES: VmDeadlines = { bootMs: 240_000, restoreMs: 60_000, snapshotMs: 120_000 };

const live = new Set<VmProcess>();
process.once("exit", () => {
  for (const vm of live) vm.kill();
});

function shQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

export class VmProcess {
  private exitedFlag = false;
  /** While start() runs, its failure path reads the console after the exit, then removes the directory. */
  private starting = true;
  readonly exited: Promise<void>;
  private control: Socket | undefined;
  private controlBuffer = "";
  /** How many language runtimes in the guest confirmed the last reseed (undefined: never restored). */
  runtimesReseeded: number | undefined;

  private constructor(
    readonly child: ChildProcess,
    private readonly watchdog: ChildProcess,
    readonly dir: string,
    /** The loopback port forwarded to the guest's harness port. */
    readonly port: number,
    private qmp: Qmp | undefined,
  ) {
    live.add(this);
    this.exited = once(child, "exit").then(() => {
      this.exitedFlag = true;
      // A guest that dies on its own (crash, SIGKILL) leaves no directory behind.
      if (!this.starting) this.cleanup();
      live.delete(this);
      this.watchdog.kill("SIGKILL");
      this.control?.destroy();
      this.qmp?.close();
    });
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  get alive(): boolean {
    return !this.exitedFlag;
  }

  /** The harness node's address as the host dials it. */
  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** The guest console so far (kernel messages and the harness's stdout/stderr). */
  console(): string {
    try {
      return readFileSync(join(this.dir, "console.log"), "utf8");
    } catch {
      return "";
    }
  }

  static async start(
    image: Image,
    accel: AccelChoice,
    how: VmStart,
    deadlines = DEFAULT_DEADLINES,
  ): Promise<VmProcess> {
    const dir = mkdtempSync(join(tmpdir(), "hh-vm-"));
    const port = await freePort();
    const m = image.manifest;
    const args = [
      ...accel.args,
      ...["-m", String(m.memoryMb), "-smp", "1", "-nodefaults", "-no-user-config", "-display", "none", "-no-reboot"],
      ...["-kernel", image.kernelPath, "-initrd", image.initrdPath, "-append", m.cmdline],
      ...["-netdev", `user,id=n0,hostfwd=tcp:127.0.0.1:${port}-:${m.guestPort}`],
      ...["-device", "virtio-net-pci,netdev=n0,romfile="],
      ...["-serial", `file:${join(dir, "console.log")}`],
      ...["-serial", `unix:${join(dir, "ctl.sock")},server=on,wait=off`],
      ...["-qmp", `unix:${join(dir, "qmp.sock")},server=on,wait=off`],
      ...(how.kind === "restore" ? ["-incoming", "defer", "-S"] : []),
    ];
    const child = spawn(QEMU, args, { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr?.setEncoding("utf8").on("data", (c: string) => (stderr = (stderr + c).slice(-4000)));
    const spawnError = new Promise<never>((_, reject) => child.once("error", reject));
    spawnError.catch(() => undefined);
    // Dies with us: its stdin is our pipe; when we are gone, `read` returns and it kills QEMU.
    const watchdog = spawn("sh", ["-c", `read _ ; kill -9 ${String(child.pid)} 2>/dev/null`], {
      stdio: ["pipe", "ignore", "ignore"],
    });
    watchdog.unref();
    const vm = new VmProcess(child, watchdog, dir, port, undefined);
    const deadline = Date.now() + (how.kind === "boot" ? deadlines.bootMs : deadlines.restoreMs);
    try {
      vm.qmp = await Promise.race([Qmp.open(join(dir, "qmp.sock"), deadline, () => vm.alive), spawnError]);
      if (how.kind === "restore") await vm.resumeFrom(how.file, deadline);
      else await vm.awaitHarness(deadline);
      vm.starting = false;
      if (!vm.alive) vm.cleanup();
      return vm;
    } catch (err) {
      vm.kill();
      await vm.exited;
      const why = err instanceof Error ? err.message : String(err);
      const detail = `${stderr.trim()}\n${vm.console().slice(-2000)}`.trim();
      vm.cleanup();
      throw new HostError(ErrorCode.Unavailable, `vm ${how.kind} failed: ${why}${detail ? `\n${detail}` : ""}`, {
        cause: err,
      });
    }
  }

  private async awaitHarness(deadline: number): Promise<void> {
    const probe = new RemoteHarness({ address: this.address, session: "", describeTimeoutMs: 2_000 });
    try {
      for (;;) {
        if (!this.alive) throw new Error("QEMU exited during boot");
        try {
          await probe.describe();
          return;
        } catch (err) {
          if (Date.now() > deadline) throw new Error(`the harness did not answer Describe in time: ${String(err)}`);
          await new Promise((r) => setTimeout(r, 250));
        }
      }
    } finally {
      probe.close();
    }
  }

  private async resumeFrom(file: string, deadline: number): Promise<void> {
    const qmp = this.requireQmp();
    await qmp.command("migrate-incoming", { uri: `exec:zstd -dcq ${shQuote(file)}` });
    const state = await awaitIncoming(qmp, deadline);
    if (state !== "paused" && state !== "running") throw new Error(`incoming migration ended in state ${state}`);
    await qmp.command("cont");
    await this.reseed(deadline);
  }

  private requireQmp(): Qmp {
    if (!this.qmp || !this.alive) throw new HostError(ErrorCode.FailedPrecondition, "vm is not running");
    return this.qmp;
  }

  /** Sends one command line to the guest agent (ttyS1); its one-line answer. */
  private async ask(line: string, deadline: number): Promise<string> {
    if (!this.control) {
      const socket = connect(join(this.dir, "ctl.sock"));
      await once(socket, "connect");
      socket.setEncoding("utf8");
      this.control = socket;
    }
    const control = this.control;
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => {
          cleanup();
          reject(new Error(`the guest agent did not answer ${JSON.stringify(line.split(" ")[0])} in time`));
        },
        Math.max(1, deadline - Date.now()),
      );
      const onData = (chunk: string) => {
        this.controlBuffer += chunk;
        const nl = this.controlBuffer.indexOf("\n");
        if (nl < 0) return;
        const answer = this.controlBuffer.slice(0, nl).trim();
        this.controlBuffer = this.controlBuffer.slice(nl + 1);
        cleanup();
        resolve(answer);
      };
      const cleanup = () => {
        clearTimeout(timer);
        control.off("data", onData);
      };
      control.on("data", onData);
      control.write(`${line}\n`);
    });
  }

  /**
   * Sets the guest's wall clock to ours, reseeds its kernel RNG and then its language runtimes (the
   * harness program's reseed hook); resolves once the agent confirmed all of it. The agent of an image
   * built before the runtime hooks existed answers without a count: it still restores (undefined).
   */
  async reseed(deadline: number): Promise<void> {
    const now = BigInt(Date.now()) * 1_000_000n;
    const answer = await this.ask(`reseed ${now} ${randomBytes(32).toString("hex")}`, deadline);
    const m = /^reseeded (\d+)(?: (\d+))?$/.exec(answer);
    if (m?.[1] !== String(now)) throw new Error(`the guest agent refused the reseed: ${answer}`);
    this.runtimesReseeded = m[2] === undefined ? undefined : Number(m[2]);
  }

  /** The guest's wall clock (ms since the epoch) and 16 fresh bytes of its kernel RNG. */
  async probeGuest(timeoutMs = 10_000): Promise<{ clockMs: number; random: string }> {
    const answer = await this.ask("probe", Date.now() + timeoutMs);
    const m = /^probe (\d+) ([0-9a-f]{32})$/.exec(answer);
    if (!m?.[1] || !m[2]) throw new Error(`unexpected probe answer ${JSON.stringify(answer)}`);
    return { clockMs: Number(BigInt(m[1]) / 1_000_000n), random: m[2] };
  }

  /**
   * Pauses the guest, writes its whole state (zstd -1) to `file`, and lets it run on — also when the
   * snapshot fails. With `bound`, the compressed stream may hold at most `bound.maxBytes` (the pipe is
   * cut one byte past it: RESOURCE_EXHAUSTED naming vmSnapshotBytes) and must finish within
   * `bound.ms` (else the migration is cancelled: DEADLINE_EXCEEDED naming vmSnapshotMs).
   */
  async snapshotTo(file: string, deadlines = DEFAULT_DEADLINES, bound?: SnapshotBound): Promise<void> {
    const qmp = this.requireQmp();
    const ms = bound?.ms ?? deadlines.snapshotMs;
    const deadline = Date.now() + ms;
    const cap = bound ? ` | head -c ${bound.maxBytes + 1}` : "";
    await qmp.command("stop");
    try {
      await qmp.command("migrate", { uri: `exec:zstd -1 -q${cap} > ${shQuote(file)}` });
      await awaitMigration(qmp, deadline);
      if (bound) checkSnapshotSize(file, bound);
    } catch (err) {
      if (bound) {
        checkSnapshotSize(file, bound);
        if (Date.now() > deadline) {
          await qmp.command("migrate_cancel").catch(() => undefined);
          throw new HostError(
            ErrorCode.DeadlineExceeded,
            `vm snapshot of ${bound.what} did not finish within vmSnapshotMs=${ms} ms (docs/operations.md, serve --limit vmSnapshotMs=N)`,
            { cause: err },
          );
        }
      }
      throw err;
    } finally {
      if (this.alive) await qmp.command("cont");
    }
  }

  /** Crash: SIGKILL, no warning. */
  kill(): void {
    if (this.alive) this.child.kill("SIGKILL");
  }

  private cleanup(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** Orderly stop: QMP quit, SIGKILL after a grace period; removes the VM's directory. */
  async stop(graceMs = 2_000): Promise<void> {
    if (this.alive) {
      const timer = setTimeout(() => this.kill(), graceMs);
      this.qmp?.command("quit").catch(() => this.kill());
      await this.exited;
      clearTimeout(timer);
    }
    this.cleanup();
  }
}
