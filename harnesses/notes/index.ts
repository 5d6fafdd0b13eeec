// The `notes` example agent (docs/agents.md), built on the kit: two host-mediated tools that read and
// write a note under the session's sandbox directory — `notes.write` always needs an operator's
// approval — and compaction once the conversation passes a threshold. Invariant: everything it does is
// a kit part, so it is as stateless and replayable as the kit: the threshold comes from the execution's
// config (journaled), never from RAM.
import { z } from "zod";
import { agent, compact, tool, type CompactPart } from "../../src/agent/index.js";
import { NoteName, NOTES_READ_TOOL, NOTES_WRITE_TOOL } from "./tools.js";
import type { Harness } from "../../src/harness/types.js";

/** Messages of history after which the agent compacts, unless the config says otherwise. */
export const DEFAULT_COMPACT_AFTER = 24;

const NotesConfig = z.object({ compact_after_messages: z.number().int().min(1).max(100_000).optional() }).strict();

function compactAfter(config: Uint8Array): number {
  if (config.length === 0) return DEFAULT_COMPACT_AFTER;
  const parsed = NotesConfig.safeParse(JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(config)));
  if (!parsed.success) throw new Error(`notes config is invalid: ${z.prettifyError(parsed.error)}`);
  return parsed.data.compact_after_messages ?? DEFAULT_COMPACT_AFTER;
}

/** The stock compact part, its threshold read from the execution's config. */
const configuredCompact: CompactPart = {
  run: (ctx, history, conversation) =>
    compact({ afterMessages: compactAfter(ctx.start.config), keepTurns: 1 }).run(ctx, history, conversation),
};

export const readNote = tool({
  name: NOTES_READ_TOOL,
  description: "Reads the note with this name (found: false when there is none).",
  args: z.object({ name: NoteName }).strict(),
});

export const writeNote = tool({
  name: NOTES_WRITE_TOOL,
  description: "Writes (replaces) the note with this name. An operator approves every write.",
  args: z.object({ name: NoteName, text: z.string().max(65_536) }).strict(),
  approval: "always",
});

export default function notesAgent(): Harness {
  return agent({
    id: "notes",
    model: "echo",
    system: "You keep notes for the user. Use notes.read and notes.write; answer briefly.",
    tools: [readNote, writeNote],
    budget: { stepsPerTurn: 8 },
    compact: configuredCompact,
  });
}
