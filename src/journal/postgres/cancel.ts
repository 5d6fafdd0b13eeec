// Cross-host cancel requests on PostgreSQL LISTEN/NOTIFY (docs/protocol.md §17.2). Invariant: a request
// reaches every subscribed host of the same journal namespace (schema) that is listening when it is
// sent, and nothing else: no row is written, so a request can never outlive the Cancel call that sends
// it (the caller repeats it until the session's lock is free) and never cancels a later turn. The
// listening connection is the journal's one PgListener (listen.ts), re-opened when it drops.
import type pg from "pg";
import { z } from "zod";
import type { PgListener } from "./listen.js";
import type { CancelRequest } from "../types.js";

/** The NOTIFY channel every harnesshost journal uses; the payload names the namespace. */
export const CANCEL_CHANNEL = "harnesshost_cancel";
/** NOTIFY payloads must stay under 8000 bytes; the reason is cut to this many characters. */
const MAX_REASON_CHARS = 1_000;

const Payload = z.object({ ns: z.string(), session: z.string().min(1), reason: z.string() });

export class PgCancelChannel {
  constructor(
    private readonly listener: PgListener,
    private readonly namespace: string,
  ) {}

  /** Sends one request (NOTIFY) through `pool`. */
  async notify(pool: pg.Pool, session: string, reason: string): Promise<void> {
    const payload = JSON.stringify({ ns: this.namespace, session, reason: reason.slice(0, MAX_REASON_CHARS) });
    await pool.query("SELECT pg_notify($1, $2)", [CANCEL_CHANNEL, payload]);
  }

  /** Subscribes; resolves once the listening connection is up (or failed to come up: it retries). */
  subscribe(listener: (request: CancelRequest) => void): Promise<() => Promise<void>> {
    return this.listener.listen(CANCEL_CHANNEL, (payload) => {
      const parsed = parsePayload(payload);
      if (parsed === undefined || parsed.ns !== this.namespace) return;
      listener({ session: parsed.session, reason: parsed.reason });
    });
  }
}

function parsePayload(payload: string): z.infer<typeof Payload> | undefined {
  try {
    return Payload.parse(JSON.parse(payload));
  } catch {
    return undefined; // not ours (or malformed): ignored
  }
}
