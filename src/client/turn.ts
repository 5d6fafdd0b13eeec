// The turn status as a typed field of every Session the client returns. Invariants: the wire is not
// changed — the host still sends the status as the `harnesshost.dev/turn` annotation (JSON), and the
// typed `turn` is parsed from it (zod: it is what a server sent) and added beside the generated
// fields; a sequence number in it is a bigint, as every seq the client returns is; a session whose
// host sends no annotation (the Go reference) or an unreadable one has `turn: undefined`.
import { z } from "zod";
import type { Session as WireSession } from "../gen/agentsessions/v1/session_pb.js";
import {
  TURN_ANNOTATION,
  TURN_STATUS_WORDS,
  type NextCommand,
  type TurnStatusWord,
  type WaitKind,
} from "../wire/annotations.js";

/** The host's status of a session's last turn (docs/client.md, "The turn status"). */
export interface Turn {
  readonly status: TurnStatusWord;
  /** What an awaiting or decided gate asks for. */
  readonly wait?: WaitKind;
  /** A decided gate's decision. */
  readonly approved?: boolean;
  /** The gate was decided on the fork parent before this child was forked from it. */
  readonly inherited?: boolean;
  /** Why an invalid or interrupted turn stopped. */
  readonly error?: string;
  /** The gate an awaiting or decided turn waits on: the tuple `approve` sends. */
  readonly gate?: { readonly executionId: string; readonly toolCallId: string; readonly requestSeq: bigint };
  /** The question an awaiting or decided gate asks (wait "question"), as the harness recorded it. */
  readonly question?: { readonly text: string; readonly choices: readonly string[]; readonly allowFreeText: boolean };
  /** The CLI command that continues the session, when one does. */
  readonly next?: NextCommand;
}

/** A session as the client returns it: the wire's Session and its typed turn status. */
export type Session = WireSession & { readonly turn: Turn | undefined };

const annotation = z.object({
  status: z.enum(TURN_STATUS_WORDS),
  wait: z.enum(["approval", "question"]).optional(),
  approved: z.boolean().optional(),
  inherited: z.boolean().optional(),
  error: z.string().optional(),
  gate: z
    .object({ execution_id: z.string(), tool_call_id: z.string(), request_seq: z.number().int().nonnegative() })
    .optional(),
  question: z.object({ text: z.string(), choices: z.array(z.string()), allow_free_text: z.boolean() }).optional(),
  next: z.enum(["exec", "approve", "answer", "resume"]).optional(),
});

/** The typed turn status of a wire Session, from its turn annotation (undefined: none, or unreadable). */
export function turnOf(session: WireSession): Turn | undefined {
  const raw = session.annotations[TURN_ANNOTATION];
  if (raw === undefined) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return undefined;
  }
  const parsed = annotation.safeParse(json);
  if (!parsed.success) return undefined;
  const a = parsed.data;
  return {
    status: a.status,
    ...(a.wait !== undefined ? { wait: a.wait } : {}),
    ...(a.approved !== undefined ? { approved: a.approved } : {}),
    ...(a.inherited !== undefined ? { inherited: a.inherited } : {}),
    ...(a.error !== undefined ? { error: a.error } : {}),
    ...(a.gate !== undefined
      ? {
          gate: {
            executionId: a.gate.execution_id,
            toolCallId: a.gate.tool_call_id,
            requestSeq: BigInt(a.gate.request_seq),
          },
        }
      : {}),
    ...(a.question !== undefined
      ? { question: { text: a.question.text, choices: a.question.choices, allowFreeText: a.question.allow_free_text } }
      : {}),
    ...(a.next !== undefined ? { next: a.next } : {}),
  };
}

/** The session with its typed turn status (the same message object's fields, plus `turn`). */
export function withTurn(session: WireSession): Session {
  return Object.assign(session, { turn: turnOf(session) });
}
