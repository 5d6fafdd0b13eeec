// A filtered page of sessions, as harnesshost.v1.Console.ListSessions and the in-process `harnesshost
// list` both serve it. Invariants: the filter is checked (zod) before the journal is read, an unknown
// state is INVALID_ARGUMENT naming it and listing the words that exist (wire/compute-states.ts, the one
// vocabulary); the filters narrow the journal's own keyset order, so paging with them never skips or
// repeats a session however many there are.
import { z } from "zod";
import type { Session } from "../gen/agentsessions/v1/session_pb.js";
import { invalidArgument } from "../errors/index.js";
import type { ComputeStateName, SessionInfo } from "../journal/types.js";
import { TURN_STATUS_WORDS } from "../wire/annotations.js";
import { COMPUTE_STATE_WORDS, parseComputeStateWord } from "../wire/compute-states.js";
import type { Host } from "./host.js";
import { sessionViewWithTurn } from "./session-proto.js";

/** The filters and cursor of one page; "" and [] mean "any". */
export interface SessionListRequest {
  readonly project: string;
  readonly pageSize: number;
  readonly pageToken: string;
  readonly harness: string;
  readonly states: readonly string[];
  readonly parentUid: string;
  /** Turn statuses to keep (TURN_STATUS_WORDS); absent or [] means any. */
  readonly turns?: readonly string[];
}

/** Journal pages one filtered-by-turn page looks at before it answers with a cursor. */
export const TURN_FILTER_PAGES = 10;

const turnWord = z.string().transform((text, ctx) => {
  const word = TURN_STATUS_WORDS.find((w) => w === text.toLowerCase());
  if (word === undefined) {
    ctx.addIssue({
      code: "custom",
      message: `unknown turn status ${JSON.stringify(text)} (turn statuses are ${TURN_STATUS_WORDS.join(", ")})`,
    });
    return z.NEVER;
  }
  return word;
});

const stateWord = z.string().transform((text, ctx) => {
  const word = parseComputeStateWord(text);
  if (word === undefined) {
    ctx.addIssue({
      code: "custom",
      message: `unknown state ${JSON.stringify(text)} (states are ${COMPUTE_STATE_WORDS.join(", ")})`,
    });
    return z.NEVER;
  }
  return word.toUpperCase() as ComputeStateName;
});

const requestSchema = z.object({
  project: z.string(),
  pageSize: z.number().int().min(0, "page_size must be ≥ 0"),
  pageToken: z.string().max(1024, "page_token is longer than 1024 characters"),
  harness: z.string(),
  states: z.array(stateWord).max(COMPUTE_STATE_WORDS.length * 4, "too many states"),
  parentUid: z.string(),
  turns: z
    .array(turnWord)
    .max(TURN_STATUS_WORDS.length * 4, "too many turn statuses")
    .default([]),
});

/** One page of the filtered list: the journal rows and the sessions as served (turn status included). */
export async function listSessionPage(
  host: Host,
  req: SessionListRequest,
): Promise<{ infos: SessionInfo[]; sessions: Session[]; nextPageToken: string }> {
  const parsed = requestSchema.safeParse(req);
  if (!parsed.success) throw invalidArgument(parsed.error.issues.map((i) => i.message).join("; "));
  const q = parsed.data;
  const journalPage = async (pageToken: string) => {
    const page = await host.journal.listSessions({
      project: q.project || host.config.defaultProject,
      pageSize: q.pageSize,
      pageToken,
      ...(q.harness !== "" ? { harness: q.harness } : {}),
      ...(q.states.length > 0 ? { computeStates: q.states } : {}),
      ...(q.parentUid !== "" ? { parentUid: q.parentUid } : {}),
    });
    const infos = [...page.sessions];
    const views = await Promise.all(infos.map((info) => sessionViewWithTurn(host.placer, info)));
    return { infos, views, nextPageToken: page.nextPageToken };
  };
  // Turn statuses live in each session's log, not in the journal's rows: with a turn filter, look at
  // whole journal pages (so the cursor resumes exactly after what was looked at) until one yields a
  // match or the bound; without one, the first page is the answer.
  const wanted = new Set<string>(q.turns);
  const infos: SessionInfo[] = [];
  const sessions: Session[] = [];
  let token = q.pageToken;
  for (let pages = 0; pages < TURN_FILTER_PAGES; pages++) {
    const page = await journalPage(token);
    page.views.forEach((view, i) => {
      const info = page.infos[i];
      if (info !== undefined && (wanted.size === 0 || wanted.has(view.turn.kind))) {
        infos.push(info);
        sessions.push(view.session);
      }
    });
    token = page.nextPageToken;
    if (token === "" || wanted.size === 0 || sessions.length > 0) break;
  }
  return { infos, sessions, nextPageToken: token };
}
