// The host's structured logs (docs/operations.md, "Logs"). Invariants: every line is one JSON object
// (or, with format "pretty", one human line rendered from that object); every line passes through
// redactSecrets before it is written, so a registered secret (a bearer token, a model API key) or a
// credential-shaped value never reaches the log sink, whatever a caller put in a field; request and
// model bodies are never logged by the host (callers log ids and sizes only).
import { pino, type DestinationStream, type Logger } from "pino";
import { redactSecrets } from "../errors/redact.js";
import type { Log } from "./op-log.js";
import { prettyLine } from "./pretty.js";

export { clipForLog, lazyChild, NO_LOG, opLogger, scopeFields, type Log, type OpScope } from "./op-log.js";

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export const LOG_FORMATS = ["json", "pretty"] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** Where lines go: a file descriptor (2 = stderr) or a writer (tests). */
export type LogSink = number | { write(line: string): void };

export interface LogOptions {
  readonly level?: LogLevel;
  /** Default: "pretty" when the sink is a TTY file descriptor, "json" otherwise. */
  readonly format?: LogFormat;
  readonly sink?: LogSink;
  /** Fields on every line (default: component=harnesshost). */
  readonly base?: Record<string, unknown>;
}

/** The format a sink gets by default: pretty for a terminal, JSON for anything a program reads. */
export function defaultLogFormat(sink: LogSink, isTty: (fd: number) => boolean): LogFormat {
  return typeof sink === "number" && isTty(sink) ? "pretty" : "json";
}

function destination(sink: LogSink, format: LogFormat): DestinationStream {
  const write =
    typeof sink === "number" ? pino.destination({ fd: sink, sync: true }) : { write: (s: string) => sink.write(s) };
  if (format === "json") return write;
  return { write: (line: string) => write.write(prettyLine(line)) };
}

export function createLog(opts: LogOptions = {}): Logger {
  const sink = opts.sink ?? 2;
  const format = opts.format ?? "json";
  return pino(
    {
      level: opts.level ?? "info",
      base: opts.base ?? { component: "harnesshost" },
      // Belt and braces: whatever a field holds, a secret the process knows never leaves in a line.
      hooks: { streamWrite: redactSecrets },
      redact: { paths: ["authorization", "token", "apiKey", "api_key", "*.authorization", "*.token"], remove: true },
    },
    destination(sink, format),
  );
}

/** A logger that writes nothing (library use and tests that do not look at logs). */
export const silentLog: Log = pino({ level: "silent" });
