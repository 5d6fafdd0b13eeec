// What each flag means, for `harnesshost CMD --help`. Invariant: every flag of every command has one
// line here — the meaning it has for that command (COMMAND_FLAG_HELP), else the meaning it has wherever
// it appears (FLAG_HELP, then the shared connection flags, HOST_FLAG_HELP) — so a flag spelled the same
// by a client and a server command (`--token-file`, `--tls-cert`) is described as that command uses it.
// Pure data: `--help` loads it without loading any command module.
import { HOST_FLAG_HELP } from "./command.js";

/** Meanings that are the same in every command that takes the flag. */
const FLAG_HELP: Readonly<Record<string, string>> = {
  session: "the session's uid (sess-…)",
  harness: "the harness, by its name on the host",
  input: "one input of the turn (repeat for several, in order)",
  "expected-last-seq": "refuse (exit 5) unless the session's last seq is N: no turn on a session that moved on",
  format: "output format",
  from: "start at seq N",
  at: "the seq to fork at (default: the session's head)",
  count: "how many children (default 1)",
  names: "comma-separated names for the children",
  "page-size": "how many per page (the command reads every page)",
  state: "keep sessions whose compute state is one of these words (repeatable; see docs/cli.md)",
  turn: "keep sessions whose turn status is one of these words (repeatable; see docs/cli.md)",
  parent: "keep the fork children of this session",
  deny: "deny instead of approve",
  reason: "why, recorded with the decision",
  execution: "the execution id of the gate to decide (with --tool-call and --request-seq; default: the pending one)",
  "tool-call": "the tool call id of the gate to decide",
  "request-seq": "the seq of the gate's APPROVAL_REQUEST record",
  text: "a free-text answer (when the question allows it)",
  choice: "the answer by its number among the recorded choices, counted from 1",
  yes: "confirm: the records are purged for good",
  "to-version": "the version of the session's harness to move it to",
  out: "write to FILE instead of stdout",
  jsonl: "a session exported with `export` (no database needed)",
  "from-go": "the Go agentsessions SQLite database to import from",
  "grace-ms": "keep blobs younger than N ms (default 600000: a snapshot being written is not collected)",
  "pid-file": "the pid file of the background server",
  "timeout-ms": "wait at most N ms for the process to exit (default 60000), then exit 5",
  name: "the name",
  version: "the version",
  address: "the harness node's address: HOST:PORT or unix:///path",
  resumability: "the tier the harness declares: STATELESS_REPLAY or REQUIRES_MEMORY_SNAPSHOT",
  "descriptor-id": "the harness id its Describe must return (default: the name)",
  observe: "also ask the node for its live descriptor",
  "include-retired": "list retired registrations too",
  force: "retire even when sessions still pin this version",
  limit: "at most N",
  model: "the model: echo (built-in, no network), an OpenAI-compatible base URL, or a model id",
  "model-name": "the model name sent to an OpenAI-compatible endpoint",
  detach: "run in the background: return once it listens (its pid and log on stderr)",
  "log-file": "with --detach: where its log goes",
  "log-level": "the least severe log level written: trace, debug, info, warn, error, fatal",
  "log-format": "json (default when stderr is not a terminal) or pretty",
};

/** Meanings that depend on the command. */
const COMMAND_FLAG_HELP: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  create: {
    name: "a display name for the session",
    harness: "the harness the session runs (default: the host's default harness)",
    model: "the model the session's turns use (default: the host's)",
  },
  exec: {
    session: "continue this session (omit it to create a new one; its uid is printed on stderr)",
    harness: "the harness of a new session (default: the host's default harness)",
  },
  replay: { format: "text (default: the re-executed outputs) or go (the Go agentctl's record lines)" },
  export: { out: "write the session's JSONL export to FILE (default: stdout)" },
  verify: { session: "verify one session (default: every session in the journal)" },
  import: { session: "import only this Go session (repeatable; default: all)" },
  "replay-check": {
    harness: "the new harness code: a built-in name or a module whose default export is a factory",
    jsonl: "a session exported with `export` (repeatable)",
    session: "check this session (repeatable; default: every session of --name)",
    name: "the registered harness name whose sessions are checked (default: the module's descriptor id)",
    limit: "check at most N sessions",
  },
  token: {
    principal: "the principal the token names (with --roles): the line becomes a named credential",
    roles: "the principal's roles, comma-separated: reader, operator, approver, admin",
    projects: "the projects the principal may act in, comma-separated, or * (default *: every project)",
    registrar: "name a registrar credential instead (the registry only; no --principal, --roles or --projects)",
  },
  serve: {
    data: "the data directory: SQLite journal, snapshots, sandboxes (default ./.harnesshost)",
    journal: "the journal instead: a SQLite file or a postgres:// URL (several hosts may share one database)",
    addr: "where the Sessions API listens (default 127.0.0.1:7233)",
    "registry-addr": "where the operator HarnessRegistry listens (default 127.0.0.1:7234; off for none)",
    "http-addr": "where the console and the API over HTTP listen (default 127.0.0.1:7235; off for none)",
    harness:
      "serve a harness: name=local|spawned|remote|vm:TARGET or name=HOST:PORT (repeatable; default: the built-ins)",
    "checkpoint-policy": "name=every-turn|on-suspend: when a memory harness is snapshotted (default every-turn)",
    project: "the project sessions go to when a call names none (default: default)",
    model:
      "the model of every harness on this host — it replaces any model a harness was built with: echo, an OpenAI-compatible base URL, a model id, or module:FILE (a module whose default export is a model provider or a function returning one, e.g. a framework's mock; docs/integrations.md)",
    "model-name": "the model name sent to the endpoint --model names",
    "model-url": "the OpenAI-compatible base URL a model id is served at",
    "model-base-url": "the reference's spelling of --model-url",
    "model-path": "the chat completions path under the base URL (default /chat/completions; may carry ?QUERY)",
    "model-auth-header": "the name of the header the model API key is sent in (default: authorization, as Bearer)",
    "node-idle-ms": "stop a spawned harness node idle for N ms (default 2000)",
    "audit-file": "append one JSON line per operator action (approve, delete, …) to FILE",
    "gc-interval-ms": "collect unreferenced snapshot blobs every N ms (default 600000; 0: never, run `gc` instead)",
    "token-file": "require a bearer token: clients must send one of the tokens in FILE (one a line)",
    "tls-cert": "serve TLS with this PEM certificate (with --tls-key)",
    "tls-key": "the PEM private key of --tls-cert",
    limit: "NAME=VALUE: change one host limit (repeatable; docs/operations.md lists them)",
    "tool-without-approval": "run this host-mediated tool without an operator's approval (repeatable)",
    tools:
      "a module of your own host-mediated tools (default export: name → { args, run }; docs/harness-authoring.md §10)",
    "log-payloads": "also log model request and response bodies (debugging only: they are users' data)",
    "metrics-addr": "also serve Prometheus /metrics on HOST:PORT",
    "pid-file": "write the pid to F once listening; removed when it stops (what `stop` reads)",
    "log-file": "with --detach: where its log goes (default DATA/serve.log)",
    version: "print the version and exit",
  },
  node: {
    harness: "the harness to serve: a built-in name or a module whose default export is a harness factory",
    listen: "where the node listens: HOST:PORT, :PORT or unix:///path",
    "ready-addr": "also serve an HTTP /readyz probe on HOST:PORT",
    model: "the model id (chat only)",
    "no-actors": "serve stateless runs only (no memory actors)",
    "parent-stdin": "stop when stdin closes (a spawning host's pipe)",
    "pid-file": "write the pid to F once listening; removed when it stops (what `stop` reads)",
    "log-file": "with --detach: where its log goes (default .harnesshost/node.log)",
  },
  conformance: {
    harness: "the harness under test: a built-in name, a module (.js/.mjs/.ts), a node's HOST:PORT, or vm:IMAGE",
    tier: "the tier to check: auto (what the harness declares), stateless or memory",
    turns: "turns per session (default 3)",
    forks: "fork children per check (default 2)",
    model: "the model the harness is given (default echo)",
    check: "run only this check id (repeatable)",
    reporter: "pretty (default), json or junit",
    out: "write the report to FILE and print one summary line",
  },
  image: {
    python: "a Python harness node script to build an image of",
    node: "a JavaScript harness node module to bundle into an image",
    include: "a directory copied next to the script (repeatable)",
    out: "the image directory to write",
    "memory-mb": "the guest's memory in MB",
    "no-cache": "rebuild every layer",
  },
  harness: {
    name: "the registration's name (get: NAME or NAME@VERSION)",
    version: "the registration's version (retire/free: only that version)",
    reason: "why it is retired (recorded)",
    "page-size": "how many registrations per page",
  },
  stop: {},
  gc: {},
};

/** The one line `CMD --help` prints for `flag`, or undefined when nothing describes it. */
export function flagHelp(command: string, flag: string): string | undefined {
  return COMMAND_FLAG_HELP[command]?.[flag] ?? FLAG_HELP[flag] ?? (HOST_FLAG_HELP as Record<string, string>)[flag];
}
