// How a command opens its SessionsApi (src/cli/host-flags.ts). Invariant: a read-only command never
// creates a journal — create is false unless the command writes.
export interface OpenOptions {
  /** Create the journal (and its folder) when it does not exist yet. Default false. */
  readonly create?: boolean;
  /** Open the journal read-only (commands that never write). */
  readonly readOnly?: boolean;
}
