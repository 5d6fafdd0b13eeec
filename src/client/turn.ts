// The turn status as a typed field of every Session the client returns. Invariants: the wire is not
// changed — the host still sends the status as the `harnesshost.dev/turn` annotation (JSON), and the
// typed `turn` is parsed from it and every field checked (it is what a server sent; by hand, not zod,
// since the client loads no zod — docs/packaging.md) and added beside the generated fields; a sequence number in it is a bigint, as every seq the client returns is; a session whose
// host sends no annotation (the Go reference) or an unreadable one has `turn: undefined`.
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

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
const isWord = <T extends string>(words: readonly T[], v: unknown): v is T => words.some((w) => w === v);
const WAITS: readonly WaitKind[] = ["approval", "question"];
const NEXTS: readonly NextCommand[] = ["exec", "approve", "answer", "resume"];

/** An optional field: absent, or of the kind `ok` accepts (else the whole annotation is unreadable). */
function optional<T>(o: Json, key: string, ok: (v: unknown) => v is T): { ok: boolean; value?: T } {
  const v = o[key];
  if (v === undefined) return { ok: true };
  return ok(v) ? { ok: true, value: v } : { ok: false };
}

const isBool = (v: unknown): v is boolean => typeof v === "boolean";
const isString = (v: unknown): v is string => typeof v === "string";
const isGate = (v: unknown): v is { execution_id: string; tool_call_id: string; request_seq: number } =>
  isObject(v) &&
  isString(v["execution_id"]) &&
  isString(v["tool_call_id"]) &&
  Number.isSafeInteger(v["request_seq"]) &&
  (v["request_seq"] as number) >= 0;
const isQuestion = (v: unknown): v is { text: string; choices: string[]; allow_free_text: boolean } =>
  isObject(v) &&
  isString(v["text"]) &&
  Array.isArray(v["choices"]) &&
  v["choices"].every(isString) &&
  isBool(v["allow_free_text"]);

/** The typed turn status of a wire Session, from its turn annotation (undefined: none, or unreadable). */
export function turnOf(session: WireSession): Turn | undefined {
  const raw = session.annotations[TURN_ANNOTATION];
  if (raw === undefined) return undefined;
  let a: unknown;
  try {
    a = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (!isObject(a) || !isWord(TURN_STATUS_WORDS, a["status"])) return undefined;
  const wait = optional(a, "wait", (v): v is WaitKind => isWord(WAITS, v));
  const approved = optional(a, "approved", isBool);
  const inherited = optional(a, "inherited", isBool);
  const error = optional(a, "error", isString);
  const gate = optional(a, "gate", isGate);
  const question = optional(a, "question", isQuestion);
  const next = optional(a, "next", (v): v is NextCommand => isWord(NEXTS, v));
  if (![wait, approved, inherited, error, gate, question, next].every((f) => f.ok)) return undefined;
  return {
    status: a["status"],
    ...(wait.value !== undefined ? { wait: wait.value } : {}),
    ...(approved.value !== undefined ? { approved: approved.value } : {}),
    ...(inherited.value !== undefined ? { inherited: inherited.value } : {}),
    ...(error.value !== undefined ? { error: error.value } : {}),
    ...(gate.value !== undefined
      ? {
          gate: {
            executionId: gate.value.execution_id,
            toolCallId: gate.value.tool_call_id,
            requestSeq: BigInt(gate.value.request_seq),
          },
        }
      : {}),
    ...(question.value !== undefined
      ? {
          question: {
            text: question.value.text,
            choices: [...question.value.choices],
            allowFreeText: question.value.allow_free_text,
          },
        }
      : {}),
    ...(next.value !== undefined ? { next: next.value } : {}),
  };
}

/** The session with its typed turn status (the same message object's fields, plus `turn`). */
export function withTurn(session: WireSession): Session {
  return Object.assign(session, { turn: turnOf(session) });
}
