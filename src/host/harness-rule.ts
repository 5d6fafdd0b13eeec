// The harness rule of a turn on an existing session: a session runs the harness it was created with,
// for life (docs/cli.md, "A session keeps its harness"). Invariant: an Exec that names a different
// harness is refused FAILED_PRECONDITION before anything is read from a runtime or written, so what
// `get` shows as the session's harness is the harness every one of its turns ran on.
import { ErrorCode, HostError } from "../errors/index.js";

/** Refuses `requested` when it names a harness other than the session's own (empty: no choice made). */
export function checkSessionHarness(session: { uid: string; harness: string }, requested: string | undefined): void {
  if (requested === undefined || requested === "" || requested === session.harness) return;
  throw new HostError(
    ErrorCode.FailedPrecondition,
    `session ${session.uid} runs harness "${session.harness}"; a session keeps its harness for life. Start a new session on "${requested}" with \`harnesshost exec --harness ${requested} --input …\` (no --session), or continue this one without --harness`,
  );
}
