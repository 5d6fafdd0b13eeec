// `harnesshost gc`: deletes snapshot blobs no session can restore from any more. Invariant: only
// blobs that are neither a session's newest checkpoint nor younger than the grace period go.
import { Host } from "../../host/host.js";
import { HOST_FLAGS, int, json, str, type Command } from "../command.js";
import { DEFAULT_DATA_DIR, existingJournalUrl } from "../host-flags.js";

export const gcCommand: Command = {
  name: "gc",
  usage: "gc [--data DIR|--journal URL] [--grace-ms N] [--json]",
  options: { ...HOST_FLAGS, "grace-ms": { type: "string" } },
  async run(ctx) {
    existingJournalUrl(ctx.values);
    const journal = str(ctx.values, "journal");
    const host = await Host.open({
      dataDir: str(ctx.values, "data") ?? DEFAULT_DATA_DIR,
      ...(journal ? { journal } : {}),
    });
    try {
      const report = await host.collectSnapshotGarbage({
        graceMs: int(ctx.values, "grace-ms", 10 * 60_000),
      });
      if (json(ctx.values))
        ctx.out(JSON.stringify({ referenced: report.referenced, deleted: report.deleted, strays: report.strays }));
      else {
        const strays = report.strays.length > 0 ? `, removed ${report.strays.length} unfinished files` : "";
        ctx.out(`kept ${report.referenced} referenced blobs, deleted ${report.deleted.length}${strays}`);
      }
      return 0;
    } finally {
      await host.close();
    }
  },
};
