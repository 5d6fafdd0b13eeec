// Approve / deny / answer one waiting gate, in place (the Session view and every Inbox card use this
// one component). Invariant: the decision sent is exactly the session's pending gate tuple
// (pending_approval) — never guessed — and an answer to a question is one of its recorded choices or
// free text only when the question allows it.
import { useState } from "preact/hooks";
import type { LogRecord } from "../../../src/gen/agentsessions/v1/common_pb.js";
import type { Session } from "../../../src/gen/agentsessions/v1/session_pb.js";
import { type ApiError, sessions } from "../api.js";
import { ASK_TOOL } from "../records.js";
import { Lacks, useCan } from "../principal.js";
import { ErrorBox, attempt } from "../ui.js";

export function Decision({ session, call, onDone }: { session: Session; call?: LogRecord; onDone: () => void }) {
  const [reason, setReason] = useState("");
  const [error, setError] = useState<ApiError | undefined>();
  const [busy, setBusy] = useState(false);
  const can = useCan();
  const gate = session.pendingApproval;
  const uid = session.metadata?.uid ?? "";
  if (gate === undefined) return null;
  if (!can("session.decide"))
    return (
      <div class="decision" data-testid="decision">
        <p>
          <strong>Waiting for a person</strong> on call <code>{gate.toolCallId}</code> (request seq{" "}
          {String(gate.requestSeq)})
        </p>
        <Lacks permission="session.decide" what="Approve, Deny, Answer" />
      </div>
    );
  const tool = call?.event?.body.case === "tool" ? call.event.body.value : undefined;

  const decide = async (approved: boolean, text: string): Promise<void> => {
    setBusy(true);
    const res = await attempt(
      () =>
        sessions.approve({
          session: uid,
          executionId: gate.executionId,
          toolCallId: gate.toolCallId,
          requestSeq: gate.requestSeq,
          approved,
          reason: text,
        }),
      setError,
    );
    setBusy(false);
    if (res !== undefined) onDone();
  };

  if (tool?.tool === ASK_TOOL) {
    const args = tool.args ?? {};
    const question = typeof args["question"] === "string" ? args["question"] : "";
    const choices = Array.isArray(args["choices"])
      ? args["choices"].filter((c): c is string => typeof c === "string")
      : [];
    const freeText = args["allow_free_text"] === true;
    return (
      <div class="decision" data-testid="decision">
        <p class="question">
          <strong>Question:</strong> {question}
        </p>
        <div class="row">
          {choices.map((c) => (
            <button type="button" key={c} disabled={busy} onClick={() => void decide(true, c)}>
              {c}
            </button>
          ))}
        </div>
        {freeText ? (
          <form
            class="row"
            onSubmit={(e) => {
              e.preventDefault();
              void decide(true, reason);
            }}
          >
            <input
              name="answer"
              placeholder="Your answer"
              value={reason}
              onInput={(e) => setReason(e.currentTarget.value)}
            />
            <button type="submit" disabled={busy || reason === ""}>
              Answer
            </button>
          </form>
        ) : null}
        <button type="button" class="deny" disabled={busy} onClick={() => void decide(false, "declined")}>
          Decline
        </button>
        <ErrorBox error={error} />
      </div>
    );
  }

  return (
    <div class="decision" data-testid="decision">
      <p>
        <strong>Approval needed</strong> for tool <code>{tool?.tool ?? gate.toolCallId}</code> (call{" "}
        <code>{gate.toolCallId}</code>, request seq {String(gate.requestSeq)})
      </p>
      {tool ? <pre class="payload">{JSON.stringify(tool.args ?? {}, null, 2)}</pre> : null}
      <div class="row">
        <input
          name="reason"
          placeholder="Reason (optional)"
          value={reason}
          onInput={(e) => setReason(e.currentTarget.value)}
        />
        <button type="button" class="approve" disabled={busy} onClick={() => void decide(true, reason)}>
          Approve
        </button>
        <button type="button" class="deny" disabled={busy} onClick={() => void decide(false, reason)}>
          Deny
        </button>
      </div>
      <ErrorBox error={error} />
    </div>
  );
}
