// Host configuration, validated with zod at the trust boundary (flags, environment, config file).
// Invariant: a Host is only ever built from a config that passed this schema.
import { z } from "zod";
import { didYouMean } from "../errors/suggest.js";
import { LimitOverrides } from "../limits/index.js";
import { VERSION_LABEL } from "../placement/registry.js";
import { parseAddress } from "../wire/address.js";

/** A harness served by this host: `name=<runtime>:<target>` on the command line. */
export const HarnessSpecFlag = z.object({
  name: z.string().regex(/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/, "harness names are RFC 1123 DNS labels"),
  /**
   * The version this entry serves (`name@version=…`); several versions of one name are served side by
   * side and the last configured is the default for new sessions (docs/versioning.md). Default: none —
   * the entry serves whatever version its harness reports.
   */
  version: z.string().regex(VERSION_LABEL, "versions are 1-64 of A-Z a-z 0-9 . _ -").optional(),
  runtime: z.enum(["local", "spawned", "remote", "vm"]),
  /** A built-in harness name, a harness module path, (remote) a node address, or (vm) an image directory. */
  target: z.string().min(1),
  checkpointPolicy: z.enum(["every-turn", "on-suspend"]).default("every-turn"),
  descriptorId: z.string().default(""),
});
export type HarnessSpecFlag = z.infer<typeof HarnessSpecFlag>;

export const HostConfig = z.object({
  /** Data directory for the SQLite journal and snapshot blobs. Default ./.harnesshost. */
  dataDir: z.string().min(1).default("./.harnesshost"),
  /** Journal URL: "sqlite:PATH", a bare path, "memory:" or "postgres://…". Default: DATA/journal.db. */
  journal: z.string().optional(),
  /**
   * "echo" (deterministic built-in), an OpenAI-compatible base URL, or a model id sent to `modelUrl`
   * (the reference's `-model ID`), or `module:FILE`, a module whose default export is a ModelProvider
   * or a function returning one (host/model-module.ts). Any model but echo also serves the `chat`
   * harness, as the reference does.
   */
  model: z.string().default("echo"),
  /** Model id sent to an OpenAI-compatible provider given as `model: URL`. */
  modelName: z.string().optional(),
  /** With a model id: the endpoint's base URL. Default https://api.openai.com/v1 (the reference's default). */
  modelUrl: z.string().optional(),
  /** Completions path under the base URL, may carry a query (`?api-version=…`). Default /chat/completions. */
  modelPath: z.string().optional(),
  /** Header carrying MODEL_API_KEY: Authorization (default, `Bearer KEY`) or another name (`api-key`, bare key). */
  modelAuthHeader: z.string().optional(),
  /** Harnesses served besides the built-in `echo` (local) and `counter` (spawned). */
  harnesses: z.array(HarnessSpecFlag).default([]),
  /** The harness a new session gets when it names none. */
  defaultHarness: z.string().default("echo"),
  /**
   * How long (ms) a spawned harness node with no actors stays up before it exits. 0 frees it at once
   * on suspend; a little idle time keeps suspend/resume cycles from paying a process start each.
   */
  nodeIdleMs: z.number().int().min(0).default(2000),
  /** JSON-lines audit log: when set, every committed turn, park and decision emits `audit.record`. */
  auditFile: z.string().min(1).optional(),
  /** Project used when a request names none. */
  defaultProject: z.string().default("default"),
  /**
   * Tools the host may run for a CONTROLLER_MEDIATED call without an operator's approval (the
   * operator's policy, never a harness's claim); every other tool needs REQUIRES_APPROVAL. Default none.
   */
  toolsWithoutApproval: z.array(z.string().min(1)).default([]),
  /**
   * Distrust stored verified positions (docs/protocol.md §5.9): every session's first touch after the
   * host opens walks and re-hashes its whole chain, as before positions existed. Default false: a first
   * touch verifies the stored position against its record and walks only the records after it.
   */
  distrustVerifiedPositions: z.boolean().default(false),
  /** Open the journal read-only (read-only CLI commands; works on a read-only data directory). */
  readOnly: z.boolean().default(false),
  /** Overrides of the limits in src/limits/table.ts (docs/operations.md, "Limits"). */
  limits: LimitOverrides.default({}),
});
export type HostConfig = z.infer<typeof HostConfig>;
export type HostConfigInput = z.input<typeof HostConfig>;

/**
 * Parses `name[@version]=<runtime>:<target>` (e.g. `mine=remote:unix:///tmp/x.sock`, `x@2=local:./v2.mjs`),
 * or the reference's shorthand `name=ADDRESS` for a harness node already running there (`mine=127.0.0.1:9000`,
 * `mine=unix:///tmp/x.sock`, `mine=dns:///node:9000`), which is `name=remote:ADDRESS`.
 */
export function parseHarnessFlag(flag: string): HarnessSpecFlag {
  const eq = flag.indexOf("=");
  const colon = flag.indexOf(":", eq + 1);
  if (eq < 1 || colon < 0)
    throw new Error(
      `--harness expects name[@version]=<local|spawned|remote|vm>:<target> or name=ADDRESS, got ${JSON.stringify(flag)}`,
    );
  const runtimes = HarnessSpecFlag.shape.runtime.options;
  const word = flag.slice(eq + 1, colon);
  const shorthand = !runtimes.some((r) => r === word) && goNodeAddress(flag.slice(eq + 1));
  const runtime = shorthand ? "remote" : word;
  const target = shorthand ? flag.slice(eq + 1) : flag.slice(colon + 1);
  const key = flag.slice(0, eq);
  const at = key.indexOf("@");
  const named = at < 0 ? { name: key } : { name: key.slice(0, at), version: key.slice(at + 1) };
  const parsed = HarnessSpecFlag.safeParse({ ...named, runtime, target });
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  if (issue?.path[0] === "runtime") {
    throw new Error(
      `unknown runtime ${JSON.stringify(word)}${didYouMean(word, runtimes)} (runtimes: ${runtimes.join(", ")}; or name=HOST:PORT for a running node)`,
    );
  }
  throw new Error(`${issue?.path.join(".") || "value"}: ${issue?.message ?? "invalid"}`);
}

/** Whether `text` is a node address the remote runtime can dial, with a port (not 0) when it is TCP. */
function goNodeAddress(text: string): boolean {
  try {
    const address = parseAddress(text);
    return address.kind === "unix" || address.port !== 0;
  } catch {
    return false;
  }
}
