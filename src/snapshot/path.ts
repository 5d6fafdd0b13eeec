// Readable JS-ish paths into an actor's state graph, for snapshot error messages (docs/protocol.md §9.3).
// Invariant: segments are recorded cheaply while walking and formatted only when an error is reported.

/** One step from a container to a value inside it. */
export type PathSegment =
  | { readonly kind: "prop"; readonly key: string }
  | { readonly kind: "index"; readonly index: number }
  | { readonly kind: "mapValue"; readonly key: unknown; readonly ordinal: number }
  | { readonly kind: "mapKey"; readonly ordinal: number }
  | { readonly kind: "setMember"; readonly ordinal: number };

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** How a Map key reads inside `.get(…)`: strings quoted, other primitives printed, objects by position. */
function formatMapKey(key: unknown, ordinal: number): string {
  switch (typeof key) {
    case "string":
      return JSON.stringify(key);
    case "number":
    case "boolean":
    case "undefined":
      return String(key);
    case "bigint":
      return `${key}n`;
    case "symbol":
      return key.toString();
    case "object":
      return key === null ? "null" : `<key #${ordinal}>`;
    case "function":
      return `<key #${ordinal}>`;
    default:
      return `<key #${ordinal}>`;
  }
}

function formatSegment(segment: PathSegment): string {
  switch (segment.kind) {
    case "prop":
      return IDENTIFIER.test(segment.key) ? `.${segment.key}` : `[${JSON.stringify(segment.key)}]`;
    case "index":
      return `[${segment.index}]`;
    case "mapValue":
      return `.get(${formatMapKey(segment.key, segment.ordinal)})`;
    case "mapKey":
      return `.<map key #${segment.ordinal}>`;
    case "setMember":
      return `.<set member #${segment.ordinal}>`;
    default: {
      const exhaustive: never = segment;
      return String(exhaustive);
    }
  }
}

/** `state` followed by each segment, e.g. `state.cache.get("k")[2]`. */
export function formatPath(segments: readonly PathSegment[]): string {
  let out = "state";
  for (const segment of segments) out += formatSegment(segment);
  return out;
}
