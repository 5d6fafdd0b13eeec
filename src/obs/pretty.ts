// Human rendering of one JSON log line for a terminal. Invariant: it never drops a field — every key
// of the JSON object appears on the rendered line — and a line that is not JSON is passed through as is.
const LEVELS: Record<number, string> = { 10: "TRACE", 20: "DEBUG", 30: "INFO ", 40: "WARN ", 50: "ERROR", 60: "FATAL" };
const SKIP = new Set(["level", "time", "msg", "pid", "hostname", "component"]);

function value(v: unknown): string {
  if (typeof v === "string") return /^[\w./:@+-]*$/.test(v) && v !== "" ? v : JSON.stringify(v);
  return JSON.stringify(v) ?? String(v);
}

export function prettyLine(line: string): string {
  let doc: Record<string, unknown>;
  try {
    doc = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  if (typeof doc !== "object" || doc === null) return line;
  const time = typeof doc["time"] === "number" ? new Date(doc["time"]).toISOString().slice(11, 23) : "";
  const level = LEVELS[doc["level"] as number] ?? String(doc["level"]);
  const fields = Object.entries(doc)
    .filter(([k]) => !SKIP.has(k))
    .map(([k, v]) => `${k}=${value(v)}`)
    .join(" ");
  return `${time} ${level} ${String(doc["msg"] ?? "")}${fields ? ` ${fields}` : ""}\n`;
}
