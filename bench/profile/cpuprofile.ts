// The parts of a V8 .cpuprofile the profiling scripts read, and how they name a frame. Invariant:
// read-only shapes; one naming rule, so summaries from different scripts line up.
export interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

export interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** "function file:line", with paths shortened to the project's folders. */
export function frameName(n: ProfileNode): string {
  const where = n.callFrame.url.replace(/^.*\/(node_modules|src|bench|harnesses)\//, "$1/");
  return `${n.callFrame.functionName || "(anonymous)"} ${where}:${n.callFrame.lineNumber + 1}`;
}

/** Each node's parent id. */
export function parentsOf(profile: Profile): Map<number, number> {
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  return parent;
}
