// `harnesshost replay-check`: new harness code against recorded sessions, before rollout
// (docs/versioning.md). Invariants: it never calls a model, runs a tool or writes to a journal; it
// exits 0 only when every session replayed identically, 1 (check failed) naming each session's first
// divergence otherwise; --json prints one document.
import { readFileSync } from "node:fs";
import { ErrorCode, HostError } from "../../errors/index.js";
import { loadHarnessFactory } from "../../host/runtimes.js";
import type { JournalRecord } from "../../journal/types.js";
import { recordsFromJsonl, replayCheck, type RecordedSession } from "../../versions/replay-check.js";
import { HOST_FLAGS, int, json, requireStr, str, UsageError, type Command } from "../command.js";
import { ExitCode } from "../exit-codes.js";

export const replayCheckCommand: Command = {
  name: "replay-check",
  readOnly: true,
  usage:
    "replay-check --harness MODULE --jsonl FILE [FILE…] [--json]\n" +
    "       replay-check --harness MODULE [--journal PATH|--data DIR|--server ADDR] [--session UID]… [--name HARNESS] [--project P] [--limit N] [--json]",
  options: {
    ...HOST_FLAGS,
    harness: { type: "string" },
    jsonl: { type: "string", multiple: true },
    session: { type: "string", multiple: true },
    name: { type: "string" },
    limit: { type: "string" },
  },
  async run(ctx) {
    const factory = await loadHarnessFactory(requireStr(ctx.values, "harness"));
    const files = ctx.values["jsonl"];
    let sessions: RecordedSession[];
    if (Array.isArray(files) && files.length > 0) {
      sessions = [...files, ...ctx.positionals].map((file) => {
        let text: string;
        try {
          text = readFileSync(file, "utf8");
        } catch (err) {
          throw new HostError(
            ErrorCode.NotFound,
            `cannot read ${file}: ${err instanceof Error ? err.message : String(err)}`,
          );
        }
        try {
          return { label: file, records: recordsFromJsonl(text) };
        } catch (err) {
          throw new HostError(
            ErrorCode.InvalidArgument,
            `${file}: ${err instanceof Error ? err.message : String(err)}`,
          );
        }
      });
    } else {
      if (ctx.positionals.length > 0) throw new UsageError(`unexpected arguments: ${ctx.positionals.join(" ")}`);
      sessions = await recordedFromHost(ctx);
    }
    const results = await replayCheck(factory, sessions);
    const failed = results.filter((r) => !r.ok).length;
    if (json(ctx.values)) ctx.out(JSON.stringify({ sessions: results, failed }));
    else {
      for (const r of results) {
        if (r.ok) ctx.out(`ok ${r.label} ${r.turns} turns`);
        else if (r.divergence)
          ctx.err(
            `DIVERGED ${r.label} at seq ${r.divergence.seq}: expected ${r.divergence.expected}; got ${r.divergence.actual}`,
          );
        else ctx.err(`FAIL ${r.label}: ${r.error ?? "not checked"}`);
      }
      ctx.out(`${results.length - failed}/${results.length} sessions replay identically`);
    }
    return failed === 0 ? ExitCode.Ok : ExitCode.Failed;
  },
};

/** The sessions named by --session, else the newest --limit sessions of --project (of harness --name). */
async function recordedFromHost(ctx: Parameters<Command["run"]>[0]): Promise<RecordedSession[]> {
  const api = await ctx.api();
  try {
    const named = ctx.values["session"];
    let uids: string[];
    if (Array.isArray(named) && named.length > 0) uids = named;
    else {
      const limit = int(ctx.values, "limit", 50, 1);
      const harness = str(ctx.values, "name");
      const all = await api.list({
        project: str(ctx.values, "project") ?? "",
        pageSize: 500,
        harness: harness ?? "",
        states: [],
        parentUid: "",
        turns: [],
      });
      uids = all
        .sort((a, b) => Number(a.metadata?.updateTime?.seconds ?? 0n) - Number(b.metadata?.updateTime?.seconds ?? 0n))
        .slice(-limit)
        .map((s) => s.metadata?.uid ?? "");
    }
    const out: RecordedSession[] = [];
    for (const uid of uids) {
      const records: JournalRecord[] = [];
      for await (const rec of api.records(uid)) {
        if (!rec.event) continue;
        records.push({
          seq: Number(rec.seq),
          prevHash: rec.prevHash,
          contentHash: rec.contentHash,
          fence: Number(rec.fence),
          event: rec.event,
        });
      }
      out.push({ label: uid, records });
    }
    return out;
  } finally {
    await api.close();
  }
}
