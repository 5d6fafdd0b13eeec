// One LISTEN connection per journal for every PostgreSQL notification channel it subscribes to (cancel
// requests, lease release requests). Invariant: while anyone is subscribed to a channel, the connection
// is kept (a dropped one is re-opened every RECONNECT_MS) and every notification of that channel that
// arrives on it reaches each of the channel's handlers once; `listening(channel)` is true only while a
// live connection has issued LISTEN for it, and every loss of the connection is reported to the
// `onLost` hooks before anything else can be heard, so a holder can stop counting on being asked.
import pg from "pg";

/** Wait before re-opening a dropped listening connection (ms). */
const RECONNECT_MS = 500;
/** Channel names are fixed identifiers of this code, never user input. */
const CHANNEL_NAME = /^[a-z_]+$/;

type Handler = (payload: string) => void;

export class PgListener {
  private readonly handlers = new Map<string, Set<Handler>>();
  /** Channels the current connection has issued LISTEN for. */
  private readonly listened = new Set<string>();
  private readonly lostHooks = new Set<() => void>();
  private client: pg.Client | undefined;
  private connecting: Promise<void> | undefined;
  private closed = false;
  private timer: NodeJS.Timeout | undefined;
  private listenQueue: Promise<void> = Promise.resolve();

  constructor(private readonly config: pg.ClientConfig) {}

  /** Whether a notification sent on `channel` now will be heard. */
  listening(channel: string): boolean {
    return this.client !== undefined && this.listened.has(channel);
  }

  /** The server process id of the listening connection, while there is one (diagnostics and tests). */
  get backendPid(): number | undefined {
    return (this.client as { processID?: number | null } | undefined)?.processID ?? undefined;
  }

  /** Calls `hook` whenever the listening connection is lost; returns the way to stop. */
  onLost(hook: () => void): () => void {
    this.lostHooks.add(hook);
    return () => this.lostHooks.delete(hook);
  }

  /** Subscribes; resolves once the channel is listened to (or the connection failed: it retries). */
  async listen(channel: string, handler: Handler): Promise<() => Promise<void>> {
    if (!CHANNEL_NAME.test(channel)) throw new Error(`bad notification channel name ${channel}`);
    let set = this.handlers.get(channel);
    if (set === undefined) {
      set = new Set();
      this.handlers.set(channel, set);
    }
    set.add(handler);
    await this.ensure();
    const client = this.client;
    if (client !== undefined && !this.listened.has(channel)) await this.listenOn(client, channel);
    return async () => {
      const current = this.handlers.get(channel);
      current?.delete(handler);
      if (current?.size === 0) this.handlers.delete(channel);
      if (this.handlers.size === 0) await this.stop();
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.handlers.clear();
    this.lostHooks.clear();
    await this.stop();
  }

  /** LISTEN statements one at a time (a pg client runs one query at a time). */
  private listenOn(client: pg.Client, channel: string): Promise<void> {
    this.listenQueue = this.listenQueue.then(async () => {
      if (this.client !== client || this.listened.has(channel)) return;
      try {
        await client.query(`LISTEN ${channel}`);
        if (this.client === client) this.listened.add(channel);
      } catch {
        // The connection is failing; its 'error'/'end' handler re-opens it and listens again.
      }
    });
    return this.listenQueue;
  }

  private ensure(): Promise<void> {
    if (this.client || this.closed) return Promise.resolve();
    this.connecting ??= this.connect().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async connect(): Promise<void> {
    // keepAlive: a listening connection to a peer that died is noticed by TCP, and then re-opened.
    const client = new pg.Client({ ...this.config, keepAlive: true });
    const lost = (): void => {
      if (this.client !== client) return;
      this.client = undefined;
      this.listened.clear();
      client.removeAllListeners("notification");
      void client.end().catch(() => undefined);
      for (const hook of [...this.lostHooks]) hook();
      this.retry();
    };
    client.on("error", lost);
    client.on("end", lost);
    client.on("notification", (msg) => this.deliver(msg.channel, msg.payload));
    const channels = [...this.handlers.keys()];
    try {
      await client.connect();
      for (const channel of channels) await client.query(`LISTEN ${channel}`);
    } catch {
      client.removeAllListeners();
      client.on("error", () => undefined);
      await client.end().catch(() => undefined);
      this.retry();
      return;
    }
    if (this.closed || this.handlers.size === 0) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    for (const channel of channels) this.listened.add(channel);
  }

  private retry(): void {
    if (this.closed || this.handlers.size === 0 || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.ensure().then(async () => {
        const client = this.client;
        if (client === undefined) return;
        for (const channel of this.handlers.keys())
          if (!this.listened.has(channel)) await this.listenOn(client, channel);
      });
    }, RECONNECT_MS);
    this.timer.unref();
  }

  private deliver(channel: string, payload: string | undefined): void {
    if (payload === undefined) return;
    for (const handler of [...(this.handlers.get(channel) ?? [])]) {
      try {
        handler(payload);
      } catch {
        // A handler's failure is its own; the others still hear the notification.
      }
    }
  }

  private async stop(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.connecting?.catch(() => undefined);
    const client = this.client;
    this.client = undefined;
    this.listened.clear();
    if (!client) return;
    client.removeAllListeners();
    client.on("error", () => undefined);
    await client.end().catch(() => undefined);
  }
}
