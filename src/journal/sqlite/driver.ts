// The one way the journal opens better-sqlite3. Invariant: no better-sqlite3 object it hands out —
// a Database, a Statement (prepared or made by `pragma`), a StatementIterator — ever becomes garbage
// while the process lives, so the garbage collector never finalizes one.
//
// Why: better-sqlite3 12.x wraps its objects in `node::ObjectWrap`, and on Node 24 that class's
// destructor asks for the current Node environment (`RemoveEnvironmentCleanupHook`); when a garbage
// collection finalizes such an object while no JavaScript context is entered (a GC started between
// two callbacks, or while a worker thread is ending) the lookup finds none and Node aborts the whole
// process (`Assertion failed: (env) != nullptr`, exit 134). better-sqlite3 13 (Node-API) does not
// have the problem but needs Node >= 22, above this package's floor (docs/packaging.md). An object
// that is still reachable when its environment ends is freed by Node's own cleanup hook, with the
// environment present, which is safe; so the journal keeps every one reachable:
// - every Database this module opens is held in a process-wide set, also after `close()` (a closed
//   one is a few hundred bytes: SQLite's memory is released by the close);
// - every Statement prepared on it is held by it, so a call site that prepares must prepare once and
//   keep the statement (the journal's do), or the list grows;
// - `pragma(source)` reuses one statement per (source, simple) instead of preparing one per call;
// - every iterator a statement's `iterate()` returns is held by its database.
import BetterSqlite3 from "better-sqlite3";

export type SqliteDatabase = BetterSqlite3.Database;
export type SqliteStatement<P extends unknown[] | {} = unknown[], R = unknown> = BetterSqlite3.Statement<P, R>;
export type SqliteOptions = BetterSqlite3.Options;

/** Every database opened through `openSqlite`, closed or not (see the module comment). */
const opened = new Set<SqliteDatabase>();

/** Opens `path` (a file, ":memory:", or a serialized image) with every handle kept reachable. */
export function openSqlite(path: string | Buffer, options?: SqliteOptions): SqliteDatabase {
  const db = new BetterSqlite3(path, options);
  opened.add(db);
  const held: object[] = [];
  const prepare = db.prepare.bind(db) as (source: string) => BetterSqlite3.Statement;
  const hold = (stmt: BetterSqlite3.Statement): BetterSqlite3.Statement => {
    held.push(stmt);
    const iterate = stmt.iterate.bind(stmt);
    stmt.iterate = ((...params: unknown[]) => {
      const it = iterate(...params);
      held.push(it);
      return it;
    }) as typeof stmt.iterate;
    return stmt;
  };
  db.prepare = ((source: string) => hold(prepare(source))) as typeof db.prepare;
  const pragmas = new Map<string, BetterSqlite3.Statement>();
  db.pragma = ((source: string, options?: BetterSqlite3.PragmaOptions) => {
    const simple = options?.simple === true;
    const key = `${simple ? "1" : "0"}${source}`;
    let stmt = pragmas.get(key);
    if (stmt === undefined) {
      stmt = hold(prepare(`PRAGMA ${source}`));
      if (simple && stmt.reader) stmt.pluck();
      pragmas.set(key, stmt);
    }
    // A pragma that sets and answers nothing is not a reader: run it, and answer as better-sqlite3's
    // own pragma() does for one (undefined when simple, else no rows).
    if (!stmt.reader) {
      stmt.run();
      return simple ? undefined : [];
    }
    return simple ? stmt.get() : stmt.all();
  }) as typeof db.pragma;
  return db;
}

/** How many databases this process has opened through `openSqlite` (tests). */
export function openedSqliteCount(): number {
  return opened.size;
}
