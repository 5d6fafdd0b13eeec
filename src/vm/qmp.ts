// A QMP (QEMU Machine Protocol) client over a unix socket. Invariants: commands are answered in the
// order they were sent (QMP is strictly request/response; asynchronous events are skipped), every
// command has a deadline, and a closed socket fails every pending command instead of hanging.
import { type Socket, connect } from "node:net";
import { z } from "zod";
import { ErrorCode, HostError } from "../errors/index.js";

const Reply = z.union([
  z.object({ return: z.unknown() }),
  z.object({ error: z.object({ class: z.string(), desc: z.string() }) }),
  z.object({ event: z.string() }),
  z.object({ QMP: z.unknown() }),
]);

interface Pending {
  readonly command: string;
  resolve(value: unknown): void;
  reject(err: Error): void;
}

export class Qmp {
  private buffer = "";
  private readonly pending: Pending[] = [];
  private closedError: Error | undefined;

  private constructor(private readonly socket: Socket) {
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => this.onData(chunk));
    socket.on("error", (err) => this.fail(err));
    socket.on("close", () => this.fail(new Error("QMP socket closed")));
  }

  /** Connects (retrying until `deadline` while QEMU creates the socket) and negotiates capabilities. */
  static async open(path: string, deadline: number, alive: () => boolean): Promise<Qmp> {
    for (;;) {
      const socket = await new Promise<Socket | undefined>((resolve) => {
        const s = connect(path);
        s.once("connect", () => resolve(s));
        s.once("error", () => resolve(undefined));
      });
      if (socket) {
        const qmp = new Qmp(socket);
        await qmp.command("qmp_capabilities", undefined, deadline - Date.now());
        return qmp;
      }
      if (!alive()) throw new HostError(ErrorCode.Unavailable, "QEMU exited before its QMP socket answered");
      if (Date.now() > deadline) throw new HostError(ErrorCode.Unavailable, `QMP socket ${path} did not answer`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  private onData(chunk: string): void {
    this.buffer += chunk;
    for (let nl = this.buffer.indexOf("\n"); nl >= 0; nl = this.buffer.indexOf("\n")) {
      const line = this.buffer.slice(0, nl).trim();
      this.buffer = this.buffer.slice(nl + 1);
      if (line === "") continue;
      let parsed: z.infer<typeof Reply>;
      try {
        parsed = Reply.parse(JSON.parse(line));
      } catch {
        this.fail(new Error(`QMP sent something unreadable: ${line.slice(0, 200)}`));
        return;
      }
      if ("event" in parsed || "QMP" in parsed) continue;
      const p = this.pending.shift();
      if (!p) continue;
      if ("error" in parsed) p.reject(new Error(`QMP ${p.command}: ${parsed.error.class}: ${parsed.error.desc}`));
      else p.resolve(parsed.return);
    }
  }

  private fail(err: Error): void {
    this.closedError ??= err;
    for (const p of this.pending.splice(0)) p.reject(err);
  }

  /** Runs one command; its `return` value. */
  command(name: string, args?: Record<string, unknown>, timeoutMs = 30_000): Promise<unknown> {
    if (this.closedError) return Promise.reject(this.closedError);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`QMP ${name} did not answer within ${timeoutMs} ms`)), timeoutMs);
      this.pending.push({
        command: name,
        resolve: (v) => {
          clearTimeout(timer);
          resolve(v);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      this.socket.write(`${JSON.stringify(args ? { execute: name, arguments: args } : { execute: name })}\n`);
    });
  }

  close(): void {
    this.socket.destroy();
  }
}

const MigrationStatus = z.object({ status: z.string().optional(), "error-desc": z.string().optional() }).passthrough();
const RunState = z.object({ status: z.string(), running: z.boolean() });

/** Polls query-migrate until the migration completed (or fails); the final status object. */
export async function awaitMigration(qmp: Qmp, deadline: number): Promise<void> {
  for (;;) {
    const s = MigrationStatus.parse(await qmp.command("query-migrate"));
    if (s.status === "completed") return;
    if (s.status === "failed" || s.status === "cancelled")
      throw new Error(`migration ${s.status}${s["error-desc"] ? `: ${s["error-desc"]}` : ""}`);
    if (Date.now() > deadline) throw new Error(`migration still ${s.status ?? "pending"} at its deadline`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Polls query-status until the VM left the `inmigrate` state; the state it reached. */
export async function awaitIncoming(qmp: Qmp, deadline: number): Promise<string> {
  for (;;) {
    const s = RunState.parse(await qmp.command("query-status"));
    if (s.status !== "inmigrate") return s.status;
    if (Date.now() > deadline) throw new Error("incoming migration did not finish by its deadline");
    await new Promise((r) => setTimeout(r, 20));
  }
}
