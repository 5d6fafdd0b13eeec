// The command table. Invariants: every command the CLI knows is listed here exactly once, with its
// one-line summary; a command's module (and everything it imports) is loaded only when that command
// runs or prints its own help, so `harnesshost --help` and `--version` load no command at all.
import type { Command } from "../command.js";

export interface CommandEntry {
  readonly name: string;
  readonly summary: string;
  load(): Promise<Command>;
}

export const commands: readonly CommandEntry[] = [
  {
    name: "create",
    summary: "create an empty session (--name, --harness, --model, --project); prints its uid",
    load: async () => (await import("./sessions.js")).createCommand,
  },
  {
    name: "exec",
    summary: "run one turn (creates a session when --session is omitted)",
    load: async () => (await import("./sessions.js")).execCommand,
  },
  {
    name: "replay",
    summary: "re-execute a session's turns from its journal with zero model calls",
    load: async () => (await import("./sessions.js")).replayCommand,
  },
  {
    name: "fork",
    summary: "branch a session at a seq (default: the head) into children",
    load: async () => (await import("./sessions.js")).forkCommand,
  },
  { name: "get", summary: "show a session", load: async () => (await import("./sessions.js")).getCommand },
  {
    name: "list",
    summary: "list sessions of a project, newest first (filters: --harness, --state, --turn, --parent)",
    load: async () => (await import("./sessions.js")).listCommand,
  },
  {
    name: "suspend",
    summary: "snapshot a session's compute and free it",
    load: async () => (await import("./sessions.js")).suspendCommand,
  },
  {
    name: "resume",
    summary: "restore a session's compute and re-drive an interrupted or decided turn (prints its outputs)",
    load: async () => (await import("./sessions.js")).resumeCommand,
  },
  {
    name: "approve",
    summary: "approve (or --deny) the session's pending approval; commits only the decision (then run resume)",
    load: async () => (await import("./sessions.js")).approveCommand,
  },
  {
    name: "deny",
    summary: "deny the session's pending approval (approve --deny); commits only the decision (then run resume)",
    load: async () => (await import("./sessions.js")).denyCommand,
  },
  {
    name: "answer",
    summary: "answer the session's pending question with --text or --choice N (1-based); then run resume",
    load: async () => (await import("./sessions.js")).answerCommand,
  },
  {
    name: "cancel",
    summary: "cancel a session's running turn (on any host sharing the journal) or withdraw its pending wait",
    load: async () => (await import("./sessions.js")).cancelCommand,
  },
  {
    name: "delete",
    summary: "delete a session and its records for good (--yes); its fork children keep theirs",
    load: async () => (await import("./sessions.js")).deleteCommand,
  },
  {
    name: "upgrade",
    summary: "move a session to another version of its harness (replay check, or memory migration)",
    load: async () => (await import("./sessions.js")).upgradeCommand,
  },
  {
    name: "replay-check",
    summary:
      "replay recorded sessions (--jsonl files, or a journal/server) under new harness code; exit 1 on divergence",
    load: async () => (await import("./replay-check.js")).replayCheckCommand,
  },
  {
    name: "export",
    summary: "write a session's records as JSON Lines (one proto3-JSON LogRecord per line)",
    load: async () => (await import("./journal.js")).exportCommand,
  },
  {
    name: "import",
    summary: "import sessions from a Go agentsessions SQLite journal (--from-go), verifying every chain",
    load: async () => (await import("./import.js")).importCommand,
  },
  {
    name: "verify",
    summary: "verify hash chains: of a JSONL export (--jsonl), or of stored sessions",
    load: async () => (await import("./journal.js")).verifyCommand,
  },
  {
    name: "serve",
    summary: "run the host: Sessions gRPC (+ health, reflection) and the operator HarnessRegistry",
    load: async () => (await import("./serve.js")).serveCommand,
  },
  {
    name: "node",
    summary: "serve a harness (built-in name or module path) as a gRPC harness node",
    load: async () => (await import("./node.js")).nodeCommand,
  },
  {
    name: "stop",
    summary: "stop a background serve or node by its --pid-file, and wait until it has exited",
    load: async () => (await import("./stop.js")).stopCommand,
  },
  {
    name: "token",
    summary: "print the server token file line of a token read from stdin (its SHA-256 digest, never the token)",
    load: async () => (await import("./token.js")).tokenCommand,
  },
  {
    name: "gc",
    summary: "delete snapshot blobs that no session references any more",
    load: async () => (await import("./gc.js")).gcCommand,
  },
  {
    name: "harness",
    summary: "register, inspect, list, retire and free harnesses on a host's operator registry",
    load: async () => (await import("./harness.js")).harnessCommand,
  },
  {
    name: "conformance",
    summary: "run the tier conformance suite against a harness (built-in name, module path, node address or vm:IMAGE)",
    load: async () => (await import("./conformance.js")).conformanceCommand,
  },
  {
    name: "init",
    summary: "write a new harness project into DIR: a harness, an agent with a tool, tests, tsconfig (offline)",
    load: async () => (await import("./init.js")).initCommand,
  },
  {
    name: "image",
    summary: "build a vm harness image (kernel + initramfs) for the vm runtime",
    load: async () => (await import("./image.js")).imageCommand,
  },
];
