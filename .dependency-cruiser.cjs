// The layer table of harnesshost, enforced by dependency-cruiser (`npm run lint:layers`, part of
// `npm run check` and so of `npm test` and CI). Invariant: a module imports only modules of its own folder or of a
// folder in a LOWER layer; no import cycles; the CLI reaches the servers only through their index.
//
// Layers, top (may import everything below) to bottom (imports nothing of ours). Each line: the
// folders of one layer and their one-line job. Folders on one line do not import one another unless
// the line says so.
const LAYERS = [
  // 0. package entry points that gather several layers: `harnesshost` (host embedding API) and
  //    `harnesshost/sdk` (src/sdk/: the authoring types of src/harness/ plus serveHarness from node/).
  //    Re-exports only.
  ["src/index\\.ts$", "src/sdk/"],
  // 1. the `harnesshost` command: parses flags, calls a server (remote) or a host (in process); and the
  //    testing kit (`harnesshost/testing`): an in-process host, session helpers and conformance for
  //    authors' own tests. Both sit on the host, the conformance suite and the client's decision rules.
  ["src/cli/", "src/testing/"],
  // 2. edges: the gRPC services (server), their HTTP/Connect transport and console (http), the
  //    conformance suite (drives a real host) and the remote client library (talks to a server over
  //    the wire). Edges never import one another, except server ⇄ http (SIBLINGS_ALLOWED below).
  ["src/server/", "src/http/", "src/conformance/", "src/client/"],
  // 3. the host: one process's assembly of journal, snapshot store, registry, runtimes and placer, and
  //    its harness catalog (registering, retiring, freeing harnesses; the registry service maps onto it).
  ["src/host/"],
  // 4. placement: admission, session guard, fences, checkpoints, waits, recovery (the Placer).
  ["src/placement/"],
  // 5. runtimes: where a harness runs (local, spawned, remote, vm) behind the Runtime SPI.
  ["src/runtime/"],
  // 6. the micro-VM machinery (QEMU, images, guest agent) the vm runtime drives; below runtime because
  //    only runtimes (and the CLI's image commands, above) start a VM.
  ["src/vm/"],
  // 7. harness nodes: both ends of Harness.Connect and the Actors extension over gRPC.
  ["src/node/"],
  // 7b. the built-in harnesses, written with the SDK and the agent kit (chat and notes are agents), so
  //     they sit above the kit; only runtimes (the harness loader) and the conformance suite name them,
  //     and the host names the executors of the example tools kept beside them (ask/demo-write.ts,
  //     notes/tools.ts).
  ["harnesses/"],
  // 7c. framework adapters (`harnesshost/ai-sdk`, `harnesshost/openai-agents`): host an existing AI SDK
  //     or OpenAI Agents SDK agent on the agent kit; the only modules that load those optional peers.
  ["src/adapters/"],
  // 8. the agent kit (`harnesshost/agent`): builds a harness from parts; reads the host-param names and
  //    compaction records the controller defines, so it sits right above controller.
  ["src/agent/"],
  // 8b. harness versions: which sessions are pinned to which version (a fold of their logs) and the
  //     offline replay check of new code; both drive the controller over a journal, nothing above it.
  ["src/versions/"],
  // 9. one turn: live sink, serving sink, replay, re-drive, approval decisions.
  ["src/controller/"],
  // 9b. the session-log projection: the one fold of a session's records into its facts (turns, gates,
  //     compute state, pin, restart points), its stored form, and the compaction record it reads. Below
  //     the controller (which drives turns from it) and above the journal and snapshot references it reads.
  ["src/projection/"],
  // 10. memory snapshots and post-commit effects.
  ["src/snapshot/", "src/effects/"],
  // 11. the hash-chained journal backends and the model providers.
  ["src/journal/", "src/model/"],
  // 12. canonical hashing, the harness authoring types (the `harnesshost/sdk` entry point above
  //     re-exports them), the gRPC adapter, the resource-limit table. limits sits here because nodes,
  //     placement, servers and runtimes all read the one table.
  ["src/canon/", "src/harness/", "src/wire/", "src/limits/"],
  // 12b. observability: the logger, the Prometheus metrics registry and its scrape handler, and the
  //      OpenTelemetry tracing switch — read by every layer above (the gRPC adapter opens RPC spans).
  ["src/obs/"],
  // 13. generated protobuf code, typed errors, package paths (where the package's files are), and abort
  //     plumbing (a controller following a signal).
  ["src/gen/", "src/errors/", "src/paths\\.ts$", "src/abort\\.ts$"],
];

// Sibling pairs that may import each other, each with its reason. http is the server's second
// transport: startServer (server/server.ts) mounts the same services on it, and it applies the same
// edge policy (auth, call logging, request ids, listen policy from server/). Moving that policy to a
// folder of its own would make them strict siblings.
const SIBLINGS_ALLOWED = { "src/http/": ["src/server/"], "src/server/": ["src/http/"] };

const path = (folders) => `^(${folders.join("|")})`;

/** For each layer: modules there may not import any folder of a higher layer, nor a sibling folder. */
const layerRules = LAYERS.flatMap((folders, i) => {
  const above = LAYERS.slice(0, i).flat();
  const rules = [];
  if (above.length > 0)
    rules.push({
      name: `layer-${i}-imports-upward`,
      comment: `${folders.join(", ")} may import only its own folder or lower layers (see LAYERS)`,
      severity: "error",
      from: { path: path(folders) },
      to: { path: path(above) },
    });
  for (const folder of folders) {
    const siblings = folders.filter((f) => f !== folder && !(SIBLINGS_ALLOWED[folder] ?? []).includes(f));
    if (siblings.length === 0 || i === 0) continue;
    rules.push({
      name: `layer-${i}-imports-sibling`,
      comment: `${folder} may not import a sibling of its layer (${siblings.join(", ")})`,
      severity: "error",
      from: { path: path([folder]) },
      to: { path: path(siblings) },
    });
  }
  return rules;
});

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: "every-module-in-a-layer",
      comment: "a new folder must be placed in LAYERS (with its job) before anything imports it",
      severity: "error",
      from: { path: "^(src|harnesses)/" },
      to: { path: "^(src|harnesses)/", pathNot: path(LAYERS.flat()) },
    },
    {
      name: "no-circular",
      comment: "an import cycle makes module order (and so start-up) depend on who is loaded first",
      severity: "error",
      from: {},
      to: { circular: true },
    },
    {
      name: "journal-backends-apart",
      comment:
        "a journal backend folder (memory/, sqlite/, postgres/) or transfer/ builds on the shared pieces at the journal's root, never on another one's folder",
      severity: "error",
      from: { path: "^src/journal/(memory|sqlite|postgres|transfer)/" },
      to: { path: "^src/journal/(memory|sqlite|postgres|transfer)/", pathNot: "^src/journal/$1/" },
    },
    {
      name: "journal-root-below-backends",
      comment:
        "the journal's shared pieces (contract, write plan, chain, columns, queue) sit below its backends: only openJournal (open.ts) and the package index name a backend",
      severity: "error",
      from: { path: "^src/journal/[^/]+\\.ts$", pathNot: "^src/journal/(open|index)\\.ts$" },
      to: { path: "^src/journal/(memory|sqlite|postgres|transfer)/" },
    },
    {
      name: "cli-uses-server-index",
      comment: "the CLI reaches the servers through src/server/index.ts only, never their internals",
      severity: "error",
      from: { path: "^src/cli/" },
      to: { path: "^src/server/", pathNot: "^src/server/index\\.ts$" },
    },
    {
      name: "no-entry-point-imports",
      comment: "package entry points re-export; code inside the package imports the module itself",
      severity: "error",
      from: { path: "^(src|harnesses)/", pathNot: path(LAYERS[0]) },
      to: { path: path(LAYERS[0]) },
    },
  ],
  options: {
    includeOnly: "^(src|harnesses)/",
    exclude: { path: "^(src/gen/|harnesses/fixtures/|harnesses/python/)" },
    // Type-only imports count: a type that points up is a dependency that points up.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    moduleSystems: ["es6"],
  },
};
