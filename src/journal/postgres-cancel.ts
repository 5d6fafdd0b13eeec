// Cross-host cancel requests on PostgreSQL LISTEN/NOTIFY (docs/protocol.md §17.2). Invariant: a request
// reaches every subscribed host of the same journal namespace (schema) that is listening when it is
// sent, and nothing else: no row is written, so a request can never outlive the Cancel call that sends
// it (the caller repeats it until the session's lock is free) and never cancels a later turn. A dropped
// listening connection is re-opened while anyone is subscribed.
import pg from "pg";
import { z } from "zod";
import type { CancelRequest } from "./types.js";

/** The NOTIFY channel every harnesshost journal uses; the payload names the namespace. */
export const CANCEL_CHANNEL = "harnesshost_cancel";
/** NOTIFY payloads must stay under 8000 bytes; the reason is cut to this many characters. */
const MAX_REASON_CHARS = 1_000;
/** Wait before re-opening a dropped listening connection (ms). */
const RECONNECT_MS = 500;

const Payload = z.object({ ns: z.string(), session: z.string().min(1), reason: z.string() });

type Listener = (request: CancelRequest) => void;

export class PgCancelChannel {
  private readonly listeners = new Set<Listener>();
  private client: pg.Client | undefined;
  private connecting: Promise<void> | undefined;
  private closed = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly config: pg.ClientConfig,
    private readonly namespace: string,
  ) {}

  /** Sends one request (NOTIFY) through `pool`. */
  async notify(pool: pg.Pool, session: string, reason: string): Promise<void> {
    const payload = JSON.stringify({ ns: this.namespace, session, reason: reason.slice(0, MAX_REASON_CHARS) });
    await pool.query("SELECT pg_notify($1, $2)", [CANCEL_CHANNEL, payload]);
  }

  /** Subscribes; resolves once the listening connection is up (or failed to come up: it retries). */
  async subscribe(listener: Listener): Promise<() => Promise<void>> {
    this.listeners.add(listener);
    await this.ensure();
    return async () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) await this.stop();
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    await this.stop();
  }

  private ensure(): Promise<void> {
    if (this.client || this.closed) return Promise.resolve();
    this.connecting ??= this.connect().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async connect(): Promise<void> {
    const client = new pg.Client(this.config);
    const lost = (): void => {
      if (this.client !== client) return;
      this.client = undefined;
      client.removeAllListeners("notification");
      void client.end().catch(() => undefined);
      this.retry();
    };
    client.on("error", lost);
    client.on("end", lost);
    client.on("notification", (msg) => this.deliver(msg.channel, msg.payload));
    try {
      await client.connect();
      await client.query(`LISTEN ${CANCEL_CHANNEL}`);
    } catch {
      client.removeAllListeners();
      client.on("error", () => undefined);
      await client.end().catch(() => undefined);
      this.retry();
      return;
    }
    if (this.closed || this.listeners.size === 0) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
  }

  private retry(): void {
    if (this.closed || this.listeners.size === 0 || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.ensure();
    }, RECONNECT_MS);
    this.timer.unref();
  }

  private deliver(channel: string, payload: string | undefined): void {
    if (channel !== CANCEL_CHANNEL || payload === undefined) return;
    let parsed: z.infer<typeof Payload>;
    try {
      parsed = Payload.parse(JSON.parse(payload));
    } catch {
      return; // not ours (or malformed): ignored
    }
    if (parsed.ns !== this.namespace) return;
    for (const listener of [...this.listeners]) {
      try {
        listener({ session: parsed.session, reason: parsed.reason });
      } catch {
        // A listener's failure is its own; the others still hear the request.
      }
    }
  }

  private async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.connecting?.catch(() => undefined);
    const client = this.client;
    this.client = undefined;
    if (!client) return;
    client.removeAllListeners();
    client.on("error", () => undefined);
    await client.end().catch(() => undefined);
  }
}
