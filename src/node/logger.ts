// The little a node logs. Invariant: logging is optional and structural, so a pino logger (or nothing)
// fits without the node depending on a logging library.
export interface NodeLogger {
  info(fields: object, message?: string): void;
  warn(fields: object, message?: string): void;
}
