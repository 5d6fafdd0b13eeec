// Go-layout SQLite journals for the import tests. How they are produced: the reference host cannot be
// built here (no Go toolchain, no network), so these files reproduce its on-disk layout — the
// `sessions`/`events` tables as its sqlitelog package creates them (unstamped for the v0.1.2-era
// layout; with the harness registry tables and PRAGMA user_version 2 for the current one), events
// stored as proto3 binary of agentsessions.v1.Event — and fill them with the records of the
// reference's own journal fixtures (controller/testdata/v0.1.2/completed.json and
// mixed-completed.json, written by the Go controller). Every seq, prev_hash, content_hash and fence
// of GO_COMPLETED/GO_MIXED is the value the Go writer stored (nothing computes them here), so a
// passing import is a cross-implementation check of the chain hashing. goEchoTurn (a current-writer
// turn with harness and version on its EXECUTION_START, which those v0.1.2 files lack) carries the
// Go-recorded model-input hash but chains with our hashing.
import { create, toBinary } from "@bufbuild/protobuf";
import { openSqlite } from "../../src/journal/sqlite/driver.js";
import { hashRecord } from "../../src/canon/index.js";
import { EventKind, EventSchema, type Event } from "../../src/gen/agentsessions/v1/common_pb.js";

export interface GoFixtureRecord {
  readonly seq: number;
  readonly prevHash: string;
  readonly hash: string;
  readonly fence: number;
  readonly event: Event;
}

const text = (role: string, t: string) => ({ role, parts: [{ part: { case: "text" as const, value: { text: t } } }] });
const input = (t: string, executionId = "") =>
  create(EventSchema, { executionId, kind: EventKind.EVENT_INPUT, body: { case: "message", value: text("user", t) } });
const output = (t: string, executionId = "") =>
  create(EventSchema, {
    executionId,
    kind: EventKind.EVENT_OUTPUT,
    body: { case: "message", value: text("assistant", t) },
  });
const modelCall = (inputHash: string, id: string, executionId = "") =>
  create(EventSchema, {
    executionId,
    kind: EventKind.EVENT_MODEL_CALL,
    body: { case: "model", value: { model: "echo", inputHash, id } },
  });
const end = (executionId = "") =>
  create(EventSchema, { executionId, kind: EventKind.EVENT_END, body: { case: "end", value: { state: "COMPLETED" } } });

function chain(rows: ReadonlyArray<readonly [string, number, Event]>): GoFixtureRecord[] {
  let prev = "";
  return rows.map(([hash, fence, event], i) => {
    const rec = { seq: i + 1, prevHash: prev, hash, fence, event };
    prev = hash;
    return rec;
  });
}

/** The Go echo model-input hash of a one-message "hello" request (reference vector). */
export const GO_HELLO_INPUT_HASH = "2611c24a1a665deca46265ed96d1e1efc699260c9cba9c07f22cda7939232c30";

/** completed.json: one completed echo turn by the v0.1.2 writer (no execution ids). */
export const GO_COMPLETED: readonly GoFixtureRecord[] = chain([
  ["62daf59c5c1e5062b1b0d47d5665b34aa52bf7ed0ca8a0b016af2c9827b5d8f6", 1, input("hello")],
  [
    "699f567f01dcee2cd3bcf8a6dd4eb4c14400a4b85f5cfd0d285dbb99687dd868",
    1,
    modelCall(GO_HELLO_INPUT_HASH, "49072a2a845249ea"),
  ],
  ["ac9431332cbf3d0d3c6bd24dc7c3d41be4226e5494d24eeaa603cb7a2c895ce7", 1, output("echo:hello")],
  ["1b0f72670340a5c139b39a2922bca9fa202e191a4d610f2211f53a501f3ab5fa", 1, end()],
]);

const EXEC = "721cca6eababd5be";

/** mixed-completed.json: a legacy turn recovered, then a current-writer turn (fences 1, 2, 3). */
export const GO_MIXED: readonly GoFixtureRecord[] = chain([
  ["62daf59c5c1e5062b1b0d47d5665b34aa52bf7ed0ca8a0b016af2c9827b5d8f6", 1, input("hello")],
  [
    "699b9c3d1bd27f64999e7f16ea2f0ea520a03eadc92874ff4012f47091147bd5",
    1,
    modelCall(GO_HELLO_INPUT_HASH, "3845894835dd7ca5"),
  ],
  ["61bd39e558e70e09368fdaa6d7c57e75ad2e28c4556a5d221c6d0f68556c26ec", 1, output("echo:hello")],
  ["f926dbb0a94376a5c8bd1bd9adb73013b1a56411f56df175946cad6b178a4874", 2, end()],
  [
    "40f6b0ad1e0b3db9f22ea475fdc74f38b2fef8e10a4b1996a0c204b98ab59c31",
    3,
    create(EventSchema, {
      executionId: EXEC,
      kind: EventKind.EVENT_EXECUTION_START,
      body: { case: "executionStart", value: { inputCount: 1n } },
    }),
  ],
  ["a0af70c858cc1073e7e804871524971bca9ab745f04e6582b96919b035b48647", 3, input("new", EXEC)],
  [
    "1b12ec8b986c77224cd2979d87ee4cdb385621fb5af27108924705a98033da38",
    3,
    modelCall("403e89a947b27e8d1ce3838a7481b8fc33e51c0e03489bdb745ceab8b02f260d", "4c42ee2f6d3d2939", EXEC),
  ],
  ["0f3a449f84537906169b8657749baa1952607a6b8280cf83459e0804421c19b0", 3, output("echo:new", EXEC)],
  ["efdfe2a4c0450ca5d8f24eb0ad7a5f5f499df09e73b786e9de745c7109aff193", 3, end(EXEC)],
]);

const ECHO_EXEC = "5f0c3a9e81d24b67";

/**
 * A current-writer Go echo turn ("hello" → "echo:hello") recording `inputHash` on its MODEL_CALL. Its
 * chain hashes are computed with our hashing (which reproduces the reference's golden vectors).
 */
export function goEchoTurn(inputHash: string): GoFixtureRecord[] {
  const events: Event[] = [
    create(EventSchema, {
      executionId: ECHO_EXEC,
      kind: EventKind.EVENT_EXECUTION_START,
      body: { case: "executionStart", value: { inputCount: 1n, harness: "echo", harnessVersion: "1" } },
    }),
    create(EventSchema, {
      executionId: ECHO_EXEC,
      kind: EventKind.EVENT_INPUT,
      body: { case: "message", value: text("user", "hello") },
    }),
    create(EventSchema, {
      executionId: ECHO_EXEC,
      kind: EventKind.EVENT_MODEL_CALL,
      body: { case: "model", value: { model: "echo", inputHash, id: "a1b2c3d4e5f60718" } },
    }),
    create(EventSchema, {
      executionId: ECHO_EXEC,
      kind: EventKind.EVENT_OUTPUT,
      body: { case: "message", value: text("assistant", "echo:hello") },
    }),
    create(EventSchema, {
      executionId: ECHO_EXEC,
      kind: EventKind.EVENT_END,
      body: { case: "end", value: { state: "COMPLETED" } },
    }),
  ];
  let prev = "";
  return events.map((event, i) => {
    const hash = hashRecord(prev, i + 1, event);
    const rec = { seq: i + 1, prevHash: prev, hash, fence: 1, event };
    prev = hash;
    return rec;
  });
}

/** The reference's sessions/events tables (v0.1.0–v0.1.2: no stamp, no registry). */
const GO_SCHEMA_V1 = `
CREATE TABLE sessions (session TEXT PRIMARY KEY, fence INTEGER NOT NULL DEFAULT 0,
  project TEXT NOT NULL DEFAULT '', name TEXT NOT NULL DEFAULT '', harness TEXT NOT NULL DEFAULT '',
  model TEXT NOT NULL DEFAULT '', parent_uid TEXT NOT NULL DEFAULT '', fork_seq INTEGER NOT NULL DEFAULT 0,
  compute_state TEXT NOT NULL DEFAULT '', created_at INTEGER NOT NULL DEFAULT 0, updated_at INTEGER NOT NULL DEFAULT 0,
  labels TEXT NOT NULL DEFAULT '', annotations TEXT NOT NULL DEFAULT '', origin TEXT NOT NULL DEFAULT '',
  identity TEXT NOT NULL DEFAULT '');
CREATE TABLE events (session TEXT NOT NULL, seq INTEGER NOT NULL, prev_hash TEXT NOT NULL, hash TEXT NOT NULL,
  fence INTEGER NOT NULL, event BLOB NOT NULL, PRIMARY KEY (session, seq));
CREATE INDEX sessions_project_created ON sessions(project, created_at DESC, session);
`;

/** Schema 2 adds the harness registry and stamps the version. */
const GO_SCHEMA_V2 = `
CREATE TABLE harnesses (name TEXT PRIMARY KEY, uid TEXT NOT NULL, spec TEXT NOT NULL, spec_digest TEXT NOT NULL,
  state TEXT NOT NULL, retire_reason TEXT NOT NULL DEFAULT '', retired_at INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
CREATE TABLE reserved_harness_names (name TEXT PRIMARY KEY, reserved_at INTEGER NOT NULL);
CREATE INDEX sessions_harness ON sessions(harness);
PRAGMA user_version = 2;
`;

export interface GoFixtureSession {
  readonly uid: string;
  readonly records: readonly GoFixtureRecord[];
  /** Omit to leave the session without a sessions row (a log-only session). */
  readonly row?: {
    readonly project?: string;
    readonly name?: string;
    readonly harness?: string;
    readonly model?: string;
    readonly fence: number;
    readonly createdAtNs: bigint;
    readonly labels?: string;
    readonly identity?: string;
  };
}

/** Writes a Go-layout journal at `path` holding `sessions`. */
export function writeGoJournal(path: string, layout: "v2" | "v0.1.2", sessions: readonly GoFixtureSession[]): void {
  const db = openSqlite(path);
  try {
    db.exec(GO_SCHEMA_V1);
    if (layout === "v2") db.exec(GO_SCHEMA_V2);
    const insertSession = db.prepare(
      `INSERT INTO sessions (session, fence, project, name, harness, model, created_at, updated_at, labels, identity, compute_state)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'LIVE')`,
    );
    const insertEvent = db.prepare(
      "INSERT INTO events (session, seq, prev_hash, hash, fence, event) VALUES (?, ?, ?, ?, ?, ?)",
    );
    for (const s of sessions) {
      const r = s.row;
      if (r)
        insertSession.run(
          s.uid,
          r.fence,
          r.project ?? "default",
          r.name ?? "",
          r.harness ?? "echo",
          r.model ?? "",
          r.createdAtNs,
          r.createdAtNs,
          r.labels ?? "",
          r.identity ?? "",
        );
      for (const rec of s.records)
        insertEvent.run(s.uid, rec.seq, rec.prevHash, rec.hash, rec.fence, toBinary(EventSchema, rec.event));
    }
  } finally {
    db.close();
  }
}
