// History sync of a remote harness (docs/protocol.md §8.8, §8.10): what the host believes a node holds
// of one session's history, and how each Start sends it. Invariants: the host believes a hold only
// after a completed turn whose node confirmed it (any turn that starts clears it, so a failed, parked
// or cancelled turn leaves nothing believed); a tail is sent only when the history carries the held
// last event at the held position; a full history above UPLOAD_HISTORY_ABOVE_BYTES goes to a node
// offering PutHistory first, in chunks, and the Start names it as an empty tail.
import { randomBytes } from "node:crypto";
import { equals } from "@bufbuild/protobuf";
import { type Event, EventSchema } from "../gen/agentsessions/v1/common_pb.js";
import { eventBytes } from "../wire/event-bytes.js";
import type { HistoryUploader } from "./actors-client.js";
import { HISTORY_BASE_HEADER, HISTORY_TOKEN_HEADER } from "./history-headers.js";
import { UPLOAD_HISTORY_ABOVE_BYTES } from "./limits.js";

/** History sent by one RemoteHarness's Start frames (diagnostics and tests). */
export interface HistoryStats {
  /** Start frames sent, retries included. */
  readonly starts: number;
  /** Start frames that carried only a tail. */
  readonly tails: number;
  /** History events carried by all Start frames. */
  readonly eventsSent: number;
  /** Tails the node refused as stale, each followed by one full resend. */
  readonly resends: number;
  /** Full histories uploaded with PutHistory before their Start (§8.10). */
  readonly uploads: number;
}

/** What the host believes the node holds for this session: `count` events under `token`. */
export interface HeldHistory {
  readonly token: string;
  readonly count: number;
  /** The last event held: a later history must carry it at the same position to be sent as a tail. */
  readonly last: Event;
}

/** How one Start sends its history: the events in the frame, the call metadata, what the node will hold. */
export interface HistoryPlan {
  readonly events: Event[];
  readonly metadata: Readonly<Record<string, string>> | undefined;
  readonly hold: HeldHistory | undefined;
  readonly tail: boolean;
  /** Events to upload under `hold.token` before the Start (which then names them as an empty tail). */
  readonly upload?: { readonly uploader: HistoryUploader; readonly events: readonly Event[] };
}

export class HistorySync {
  /** Set only by a completed turn whose node confirmed the hold; cleared when any turn starts. */
  #held: HeldHistory | undefined;
  readonly #stats = { starts: 0, tails: 0, eventsSent: 0, resends: 0, uploads: 0 };

  constructor(
    private readonly session: string,
    private readonly incremental: () => boolean,
    private readonly uploader: () => HistoryUploader | undefined,
  ) {}

  /** History sent so far (a snapshot of the counters). */
  get stats(): HistoryStats {
    return { ...this.#stats };
  }

  /** Believe nothing: the next Start sends the full history. */
  forget(): void {
    this.#held = undefined;
  }

  /** A turn completed with the node holding `held` (undefined: it confirmed nothing). */
  completed(held: HeldHistory | undefined): void {
    this.#held = held;
  }

  /** Counts one Start frame sent under `plan`. */
  noteStart(plan: HistoryPlan): void {
    this.#stats.starts += 1;
    this.#stats.eventsSent += plan.events.length;
    if (plan.tail) this.#stats.tails += 1;
  }

  noteResend(): void {
    this.#stats.resends += 1;
  }

  noteUpload(): void {
    this.#stats.uploads += 1;
  }

  /**
   * The history plan of a Start: nothing negotiated (or nothing to send) — the full history and no
   * metadata; a history that extends what the node holds — the tail; anything else — the full history
   * under a fresh token. Histories are windows of one session's journal that only grow until a
   * compaction moves their start (docs/protocol.md §16.4), so a history that carries the held last
   * event (an END or lifecycle record, unique in the session) at the held position extends the held
   * events; after a compaction it does not, and the full window is sent under a fresh token.
   */
  plan(history: readonly Event[]): HistoryPlan {
    const held = this.#held;
    if (
      this.incremental() &&
      this.session !== "" &&
      held !== undefined &&
      held.count <= history.length &&
      sameEvent(history[held.count - 1], held.last)
    ) {
      return {
        events: history.slice(held.count),
        metadata: { [HISTORY_TOKEN_HEADER]: held.token, [HISTORY_BASE_HEADER]: String(held.count) },
        hold: { token: held.token, count: history.length, last: history[history.length - 1] ?? held.last },
        tail: true,
      };
    }
    return this.fullPlan(history);
  }

  /** The full history: in the Start frame, or uploaded first when it is large and the node offers it. */
  fullPlan(history: readonly Event[]): HistoryPlan {
    const last = history[history.length - 1];
    if (!this.incremental() || this.session === "" || last === undefined) {
      return { events: [...history], metadata: undefined, hold: undefined, tail: false };
    }
    const token = randomBytes(16).toString("hex");
    const hold = { token, count: history.length, last };
    const uploader = this.uploader();
    if (uploader !== undefined && exceedsBytes(history, UPLOAD_HISTORY_ABOVE_BYTES)) {
      // Uploaded in chunks first; the Start then names all of it as held, with an empty tail.
      return {
        events: [],
        metadata: { [HISTORY_TOKEN_HEADER]: token, [HISTORY_BASE_HEADER]: String(history.length) },
        hold,
        tail: true,
        upload: { uploader, events: history },
      };
    }
    return { events: [...history], metadata: { [HISTORY_TOKEN_HEADER]: token }, hold, tail: false };
  }
}

/** Whether the events encode to more than `limit` bytes (stops counting once they do). */
function exceedsBytes(events: readonly Event[], limit: number): boolean {
  let bytes = 0;
  for (const e of events) {
    bytes += eventBytes(e);
    if (bytes > limit) return true;
  }
  return false;
}

function sameEvent(a: Event | undefined, b: Event): boolean {
  return a === b || (a !== undefined && equals(EventSchema, a, b));
}
