// `harnesshost import --from-go PATH.db`: brings a reference (Go) host's sessions into our journal.
// Invariant: a session is written only when its uid passed the session-id rule and its whole chain
// verified, with its records verbatim, each session on its own (one refused session never stops the
// others); the command exits 1 when any session was refused (naming its kind and first bad seq) and 0
// only when every session is now present here.
import { importGoJournal } from "../../journal/transfer/go-import.js";
import { openGoJournal } from "../../journal/transfer/go-source.js";
import { openJournal } from "../../journal/index.js";
import { HOST_FLAGS, json, requireStr, str, UsageError, type Command } from "../command.js";
import { journalUrl } from "../host-flags.js";

export const importCommand: Command = {
  name: "import",
  usage: "import --from-go PATH.db [--session UID]... [--journal URL|--data DIR] [--json]",
  options: { ...HOST_FLAGS, "from-go": { type: "string" }, session: { type: "string", multiple: true } },
  async run(ctx) {
    const from = requireStr(ctx.values, "from-go");
    if (str(ctx.values, "server"))
      throw new UsageError("import writes a journal directly: use --journal or --data, not --server", false);
    const only = ctx.values["session"];
    const source = openGoJournal(from);
    try {
      const journal = await openJournal(journalUrl(ctx.values));
      try {
        const report = await importGoJournal(source, journal, Array.isArray(only) ? only : undefined);
        if (json(ctx.values)) ctx.out(JSON.stringify(report));
        else {
          for (const s of report.sessions) {
            if (s.status === "refused") ctx.err(`REFUSED ${s.uid} ${s.kind} at seq ${s.seq}: ${s.message}`);
            else ctx.out(`${s.status} ${s.uid} ${s.records} records head ${s.head}`);
          }
          ctx.out(
            `${report.sessions.length - report.refused}/${report.sessions.length} sessions imported (Go layout ${report.layout})`,
          );
        }
        return report.refused === 0 ? 0 : 1;
      } finally {
        await journal.close();
      }
    } finally {
      source.close();
    }
  },
};
