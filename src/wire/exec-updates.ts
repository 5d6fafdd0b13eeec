// The Exec update shape a client may negotiate (docs/protocol.md §20). Invariants: a call without the
// header gets the reference's stream unchanged, so a Go client never sees a difference; a value the
// host does not know is refused, never guessed at; the host answers an accepted shape by echoing it in
// the response headers, so a client knows whether the stream will close with a Session frame (a host
// that ignores the header — the Go reference — echoes nothing). Both ends share this module.

/** Request header naming the shape; echoed in the response headers when the host honours it. */
export const EXEC_UPDATES_HEADER = "x-harnesshost-exec-updates";

/**
 * `all`: every update of the reference stream, then one closing Session frame (the session after the
 * turn, as GetSession would serve it). `records`: the same without delta frames.
 */
export const EXEC_UPDATE_SHAPES = ["all", "records"] as const;
export type ExecUpdateShape = (typeof EXEC_UPDATE_SHAPES)[number];

/** What a request asked for: the reference stream (no header), a known shape, or a refusal's reason. */
export type ExecShapeRequest =
  | { readonly kind: "reference" }
  | { readonly kind: "shape"; readonly shape: ExecUpdateShape }
  | { readonly kind: "refused"; readonly reason: string };

/** Reads the header's values (as grpc-js Metadata.get returns them). */
export function execShapeOf(values: readonly (string | Buffer)[]): ExecShapeRequest {
  if (values.length === 0) return { kind: "reference" };
  const expected = `expected one of: ${EXEC_UPDATE_SHAPES.join(", ")}`;
  if (values.length > 1)
    return { kind: "refused", reason: `${EXEC_UPDATES_HEADER} was sent more than once; ${expected}` };
  const value = values[0];
  const shape = EXEC_UPDATE_SHAPES.find((s) => s === value);
  if (shape === undefined) {
    const shown = typeof value === "string" ? JSON.stringify(value.slice(0, 64)) : "a binary value";
    return { kind: "refused", reason: `${EXEC_UPDATES_HEADER} ${shown} is not a known shape; ${expected}` };
  }
  return { kind: "shape", shape };
}
