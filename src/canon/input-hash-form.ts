// Which model-input hash form an execution was written with. Invariant: the form is a recorded
// fact of the session (an annotation set when its records were imported), never guessed from the
// hash: executions that start at or before the Go-written boundary hash in the reference's Go
// form, every other execution in ours (JCS of proto3-JSON).
import type { ModelCall } from "../gen/agentsessions/v1/common_pb.js";
import { goModelInputHash } from "./go-model-input.js";
import { modelInputHash } from "./model-input.js";

export type InputHashForm = "harnesshost" | "go";

/** Session annotation naming the last seq the Go host wrote (set by `import --from-go`). */
export const GO_WRITTEN_THROUGH_ANNOTATION = "harnesshost.dev/go-written-through-seq";

/** The form of the execution whose EXECUTION_START (or first record) is at `startSeq`. */
export function inputHashFormOf(
  annotations: Readonly<Record<string, string>> | undefined,
  startSeq: number,
): InputHashForm {
  const through = annotations?.[GO_WRITTEN_THROUGH_ANNOTATION];
  if (through === undefined || !/^\d+$/.test(through)) return "harnesshost";
  return startSeq <= Number(through) ? "go" : "harnesshost";
}

/** The request's input hash in `form`; undefined when the Go form of this shape is not reproducible. */
export function modelInputHashIn(form: InputHashForm, request: ModelCall): string | undefined {
  switch (form) {
    case "harnesshost":
      return modelInputHash(request);
    case "go":
      return goModelInputHash(request);
    default: {
      const never: never = form;
      throw new Error(`unknown input hash form ${String(never)}`);
    }
  }
}
