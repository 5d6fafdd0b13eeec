// Multi-host test plumbing: N real `harnesshost serve` processes on one fresh PostgreSQL schema (each
// with its own data dir), typed clients per host, SIGKILL and restart of one host, and a journal handle
// on the same schema for verification. Invariant: close() kills every process it started and drops the
// schema, whatever the test did.
import { spawn, type ChildProcess } from "node:child_process";
import { status as GrpcStatus } from "@grpc/grpc-js";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HarnessRegistry } from "../../src/gen/agentsessions/v1/harness_registry_pb.js";
import { Sessions } from "../../src/gen/agentsessions/v1/session_pb.js";
import { GrpcApi } from "../../src/cli/grpc-api.js";
import { connect, HarnessHostError } from "../../src/client/index.js";
import { PostgresJournal } from "../../src/journal/postgres/journal.js";
import { RpcError, createClient, type MethodsOf, type ServiceClient } from "../../src/wire/index.js";
import { PG_URL, dropSchemas } from "../journal/postgres-fixture.js";

export { PG_URL };
import { CLI_ENTRY } from "../support/cli-entry.js";

export const BIN = CLI_ENTRY;

export type RegistryClient = ServiceClient<MethodsOf<typeof HarnessRegistry>>;
export type SessionsClient = ServiceClient<MethodsOf<typeof Sessions>>;

/** A fresh schema name for one test (dropped by Cluster.close). */
export function mhSchema(): string {
  return `hh_mh_${randomBytes(6).toString("hex")}`;
}

export function journalUrl(schema: string): string {
  return `${PG_URL}${PG_URL.includes("?") ? "&" : "?"}schema=${schema}`;
}

/** One running `serve` process and its clients. */
export class HostProcess {
  api!: GrpcApi;
  sessions!: SessionsClient;
  registry!: RegistryClient;
  addr = "";
  registryAddr = "";
  stderr = "";
  private proc: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();

  constructor(
    readonly name: string,
    readonly dataDir: string,
    private readonly journal: string,
  ) {}

  get running(): boolean {
    return this.proc !== undefined && this.proc.exitCode === null && this.proc.signalCode === null;
  }

  /** Starts the process and waits for its listening line (the ready signal). */
  async start(): Promise<void> {
    this.stderr = "";
    const proc = spawn(
      process.execPath,
      [
        BIN,
        "serve",
        "--journal",
        this.journal,
        "--data",
        this.dataDir,
        "--addr",
        "127.0.0.1:0",
        "--registry-addr",
        "127.0.0.1:0",
        "--http-addr",
        "127.0.0.1:0",
        "--log-level",
        "warn",
      ],
      { stdio: ["ignore", "ignore", "pipe"] },
    );
    this.proc = proc;
    this.exited = new Promise((res) => proc.once("exit", () => res()));
    const ready = await new Promise<RegExpExecArray>((res, rej) => {
      proc.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
        this.stderr += chunk;
        const m = /harnesshost listening addr=(\S+) registry=(\S+)/.exec(this.stderr);
        if (m) res(m);
      });
      void this.exited.then(() => rej(new Error(`${this.name} exited before listening:\n${this.stderr}`)));
    });
    this.addr = ready[1] ?? "";
    this.registryAddr = ready[2] ?? "";
    this.sessions = createClient(Sessions, this.addr);
    this.api = new GrpcApi(connect({ address: this.addr }));
    this.registry = createClient(HarnessRegistry, this.registryAddr);
  }

  /** SIGKILL: no shutdown, connections (and advisory locks) die with the process. */
  async kill(): Promise<void> {
    this.closeClients();
    if (this.running) this.proc?.kill("SIGKILL");
    await this.exited;
  }

  /** SIGTERM, a graceful stop. */
  async stop(): Promise<void> {
    this.closeClients();
    if (this.running) this.proc?.kill("SIGTERM");
    await this.exited;
  }

  /** How many times this host's clients were closed (by kill or stop): a call begun before then may fail on a shut channel. */
  closures = 0;

  private closeClients(): void {
    if (this.addr === "") return;
    this.closures += 1;
    this.sessions.close();
    void this.api.close();
    this.registry.close();
    this.addr = "";
  }
}

export class Cluster {
  readonly hosts: HostProcess[];
  private journalHandle: PostgresJournal | undefined;

  private constructor(
    readonly schema: string,
    private readonly root: string,
    size: number,
    params: string,
  ) {
    this.hosts = Array.from(
      { length: size },
      (_, i) =>
        new HostProcess(
          `host${String.fromCharCode(65 + i)}`,
          join(root, `host-${i}`),
          `${journalUrl(schema)}${params}`,
        ),
    );
  }

  /**
   * Starts `size` hosts on one fresh schema (the first creates it; the rest start together). `params`:
   * extra journal URL parameters, e.g. "&session_lease_ms=0" (leases off).
   */
  static async start(size: number, params = ""): Promise<Cluster> {
    const cluster = new Cluster(mhSchema(), mkdtempSync(join(tmpdir(), "hh-mh-")), size, params);
    try {
      await cluster.hosts[0]!.start();
      await Promise.all(cluster.hosts.slice(1).map((h) => h.start()));
    } catch (err) {
      await cluster.close();
      throw err;
    }
    return cluster;
  }

  host(i: number): HostProcess {
    const h = this.hosts[i];
    if (!h) throw new Error(`no host ${i}`);
    return h;
  }

  /** A journal on the cluster's schema, opened in the test process (for verify and raw reads). */
  async journal(): Promise<PostgresJournal> {
    this.journalHandle ??= await PostgresJournal.open(PG_URL, { schema: this.schema, poolSize: 2 });
    return this.journalHandle;
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.hosts.map((h) => h.kill()));
    await this.journalHandle?.close();
    await dropSchemas([this.schema]);
    rmSync(this.root, { recursive: true, force: true });
  }
}

/** The gRPC status code of a failed call (undefined when it succeeded). */
export async function codeOf(p: Promise<unknown>): Promise<number | undefined> {
  try {
    await p;
    return undefined;
  } catch (err) {
    const code = grpcCodeOf(err);
    if (code !== undefined) return code;
    throw err;
  }
}

/** The gRPC status of a failed call, from the wire (RpcError) or the client (HarnessHostError). */
export function grpcCodeOf(err: unknown): number | undefined {
  if (err instanceof RpcError) return err.grpcCode;
  if (err instanceof HarnessHostError) return GrpcStatus[err.status];
  return undefined;
}

export { eventually } from "../fixtures/eventually.js";
