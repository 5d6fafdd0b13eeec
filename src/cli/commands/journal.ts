// Journal commands: export a session as JSON Lines and verify chains, with or without a database.
// Invariant: verify exits 0 only when every checked chain is intact, and names the first bad seq.
import { createReadStream, createWriteStream } from "node:fs";
import { createInterface } from "node:readline";
import { jsonlLine, verifyJsonl, verifyRecords } from "../../journal/transfer/export.js";
import { openJournal } from "../../journal/index.js";
import { ErrorCode, HostError } from "../../errors/index.js";
import { ExitCode } from "../exit-codes.js";
import { HOST_FLAGS, json, requireStr, str, type Command, type CommandContext } from "../command.js";
import { existingJournalUrl } from "../host-flags.js";

export const exportCommand: Command = {
  name: "export",
  readOnly: true,
  usage: "export --session UID [--out FILE]",
  options: { ...HOST_FLAGS, session: { type: "string" }, out: { type: "string" } },
  async run(ctx) {
    const session = requireStr(ctx.values, "session");
    const outPath = str(ctx.values, "out");
    const api = await ctx.api();
    const sink = outPath ? createWriteStream(outPath) : undefined;
    try {
      for await (const rec of api.records(session)) {
        const line = `${jsonlLine(rec)}\n`;
        if (sink) {
          if (!sink.write(line)) await new Promise<void>((r) => sink.once("drain", () => r()));
        } else process.stdout.write(line);
      }
      return 0;
    } finally {
      if (sink)
        await new Promise<void>((resolve, reject) => sink.end((err?: Error | null) => (err ? reject(err) : resolve())));
      await api.close();
    }
  },
};

async function verifyFile(ctx: CommandContext, file: string): Promise<number> {
  const lines = createInterface({ input: createReadStream(file), crlfDelay: Infinity });
  const res = await verifyJsonl(
    (async function* () {
      for await (const line of lines) if (line.trim() !== "") yield line;
    })(),
  );
  if (json(ctx.values)) ctx.out(JSON.stringify(res));
  if (res.ok) {
    if (!json(ctx.values)) ctx.out(`ok ${res.records} records, head ${res.head.seq} ${res.head.hash}`);
    return 0;
  }
  if (!json(ctx.values)) ctx.err(`harnesshost: ${file}: ${res.kind}: ${res.message}`);
  return ExitCode.Failed;
}

export const verifyCommand: Command = {
  name: "verify",
  readOnly: true,
  usage: "verify --jsonl FILE | verify [--journal PATH|--data DIR|--server ADDR] [--session UID] [--json]",
  options: { ...HOST_FLAGS, jsonl: { type: "string" }, session: { type: "string" } },
  async run(ctx) {
    const file = str(ctx.values, "jsonl");
    if (file) return verifyFile(ctx, file);
    const session = str(ctx.values, "session");
    if (str(ctx.values, "server")) {
      // Remote: verify client-side over the records the server streams.
      const api = await ctx.api();
      try {
        const uid = requireStr(ctx.values, "session");
        // Streamed: a million-record session is checked one record at a time, never held whole.
        const res = await verifyRecords(api.records(uid));
        const s = await api.get(uid);
        const truncated = res.ok && BigInt(res.records) !== s.lastSeq;
        const ok = res.ok && !truncated;
        if (json(ctx.values))
          ctx.out(JSON.stringify({ session: uid, ...res, ...(truncated ? { ok: false, kind: "truncated" } : {}) }));
        else if (ok) ctx.out(`ok ${uid} ${res.ok ? res.records : 0} records`);
        else
          ctx.err(
            `harnesshost: ${uid}: ${res.ok ? `truncated: ${res.records} records but the session reports last_seq ${s.lastSeq}` : `${res.kind}: ${res.message}`}`,
          );
        return ok ? ExitCode.Ok : ExitCode.Failed;
      } finally {
        await api.close();
      }
    }
    const journal = await openJournal(existingJournalUrl(ctx.values), { readOnly: true });
    try {
      const uids = session ? [session] : await journal.allSessionUids();
      let failed = 0;
      const results = [];
      for (const uid of uids) {
        if (!(await journal.getSession(uid))) throw new HostError(ErrorCode.NotFound, `session ${uid} not found`);
        const res = await journal.verify(uid);
        results.push(res);
        if (!res.ok) failed++;
        if (!json(ctx.values)) {
          if (res.ok) ctx.out(`ok ${uid} ${res.records} records`);
          else ctx.err(`FAIL ${uid} ${res.kind} at seq ${res.seq}: ${res.message}`);
        }
      }
      if (json(ctx.values)) ctx.out(JSON.stringify({ sessions: results, failed }));
      else if (uids.length > 1 || !session) ctx.out(`${uids.length - failed}/${uids.length} sessions intact`);
      return failed === 0 ? ExitCode.Ok : ExitCode.Failed;
    } finally {
      await journal.close();
    }
  },
};
