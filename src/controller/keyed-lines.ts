// A JSON-lines file of records found by key, read once and appended to (synchronously: a line is on disk
// before `put` returns). Invariant: a line that does not parse — the torn tail of a process that died
// while appending it — is no record (its run did not complete, so it runs again, as if the process had
// died inside it), and the next record starts on a new line so the torn tail never swallows it.
import { appendFileSync, mkdirSync, readFileSync } from "node:fs";
import { dirname } from "node:path";

export class KeyedLines<T> {
  private loaded: Map<string, T> | undefined;
  /** The file ends inside a line (a torn append): the next record starts on a new line. */
  private torn = false;
  constructor(
    private readonly file: string,
    /** The record a line holds, or undefined when it is not one. */
    private readonly parse: (line: string) => T | undefined,
    private readonly keyOf: (record: T) => string,
  ) {}

  private all(): Map<string, T> {
    if (this.loaded) return this.loaded;
    const map = new Map<string, T>();
    let text = "";
    try {
      text = readFileSync(this.file, "utf8");
    } catch {
      // no records yet
    }
    for (const line of text.split("\n")) {
      const r = line.trim() === "" ? undefined : this.parse(line);
      if (r !== undefined) map.set(this.keyOf(r), r);
    }
    this.torn = text !== "" && !text.endsWith("\n");
    this.loaded = map;
    return map;
  }

  get(key: string): T | undefined {
    return this.all().get(key);
  }

  put(record: T): void {
    const map = this.all();
    mkdirSync(dirname(this.file), { recursive: true });
    appendFileSync(this.file, `${this.torn ? "\n" : ""}${JSON.stringify(record)}\n`, "utf8");
    this.torn = false;
    map.set(this.keyOf(record), record);
  }
}
