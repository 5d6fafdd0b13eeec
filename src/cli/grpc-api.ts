// The CLI's remote host: every SessionsApi call goes through `harnesshost/client` to `--server` (one
// client in the codebase). Invariants: the documents commands print are the same as in process (same
// Session messages, same OUTPUT texts); the token is read from a file, sent only as
// `authorization: Bearer …`, and never printed.
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import type { LogRecord } from "../gen/agentsessions/v1/common_pb.js";
import type { Session } from "../gen/agentsessions/v1/session_pb.js";
import { pickToken } from "../wire/token-file.js";
import { connect, type ConnectOptions, type HarnessHostClient } from "../client/connect.js";
import type {
  DecisionOutcome,
  ExecOutcome,
  ListFilter,
  ResumeOutcome,
  SessionsApi,
  SuspendOutcome,
  UpgradeOutcome,
} from "./api.js";
import { requireStr, str, UsageError, type FlagValues } from "./command.js";

/** Connection options from --token-file and --tls-ca/--tls-cert/--tls-key (shared by every --server command). */
export function remoteConnectOptions(values: FlagValues, address: string): ConnectOptions {
  const tokenFile = str(values, "token-file");
  const ca = str(values, "tls-ca");
  const cert = str(values, "tls-cert");
  const key = str(values, "tls-key");
  if ((cert === undefined) !== (key === undefined)) throw new UsageError("--tls-cert and --tls-key go together");
  if (cert !== undefined && ca === undefined) throw new UsageError("--tls-cert needs --tls-ca");
  let token: string | undefined;
  if (tokenFile !== undefined) {
    // FILE#NAME picks the line labelled principal=NAME (a file literally named so is read whole).
    const hash = tokenFile.lastIndexOf("#");
    const [path, principal] =
      hash > 0 && !existsSync(tokenFile)
        ? [tokenFile.slice(0, hash), tokenFile.slice(hash + 1)]
        : [tokenFile, undefined];
    token = pickToken(readFileSync(path, "utf8"), principal);
    if (token === undefined)
      throw new UsageError(
        `--token-file ${path} holds no token${principal !== undefined ? ` labelled principal=${principal}` : ""}`,
      );
  }
  return {
    address,
    ...(ca !== undefined
      ? {
          tls: {
            ca: readFileSync(ca),
            ...(cert !== undefined && key !== undefined ? { cert: readFileSync(cert), key: readFileSync(key) } : {}),
          },
        }
      : {}),
    ...(token !== undefined ? { token } : {}),
    // One id per CLI invocation: every call it makes shares it in the host's (and nodes') logs.
    requestId: randomBytes(12).toString("hex"),
  };
}

export class GrpcApi implements SessionsApi {
  constructor(private readonly client: HarnessHostClient) {}

  static open(values: FlagValues): GrpcApi {
    return new GrpcApi(connect(remoteConnectOptions(values, requireStr(values, "server"))));
  }

  async exec(p: Parameters<SessionsApi["exec"]>[0]): Promise<ExecOutcome> {
    const call = this.client.sessions.exec({
      ...(p.session !== undefined ? { session: p.session } : {}),
      ...(p.harness !== undefined ? { harness: p.harness } : {}),
      input: p.inputs,
      ...(p.expectedLastSeq !== undefined ? { expectedLastSeq: p.expectedLastSeq } : {}),
    });
    if (p.onDelta || p.onOutput || p.onSession) {
      let announced = false;
      for await (const event of call) {
        if (event.kind === "session" && !announced) {
          announced = true;
          p.onSession?.(event.session.metadata?.uid ?? "");
        } else if (event.kind === "delta" && event.chunk !== "") p.onDelta?.(event.chunk);
        else if (event.kind === "record" && event.output !== undefined) p.onOutput?.(event.output);
      }
    }
    const res = await call.result();
    const lastSeq = Number(res.lastSeq);
    return { session: res.session, output: res.outputs.join("\n"), lastSeq, records: [...res.records] };
  }

  async replay(session: string): Promise<{ outputs: string[]; modelCalls: number }> {
    return { outputs: await this.client.sessions.outputs(session), modelCalls: 0 };
  }

  create(p: { name: string; harness: string; model: string; project: string }): Promise<Session> {
    return this.client.sessions.create(p);
  }

  records(session: string, fromSeq?: number): AsyncIterable<LogRecord> {
    return this.client.sessions.replay(session, fromSeq !== undefined ? { fromSeq } : {});
  }

  fork(p: Parameters<SessionsApi["fork"]>[0]): Promise<Session[]> {
    return this.client.sessions.fork(p);
  }

  get(session: string): Promise<Session> {
    return this.client.sessions.get(session);
  }

  async list(p: ListFilter): Promise<Session[]> {
    const out: Session[] = [];
    for await (const s of this.client.sessions.list(p)) out.push(s);
    return out;
  }

  suspend(session: string): Promise<SuspendOutcome> {
    return this.client.sessions.suspend(session);
  }

  async upgrade(p: { session: string; toVersion: string }): Promise<UpgradeOutcome> {
    const r = await this.client.versions.upgrade(p.session, p.toVersion);
    return { ...r, upgradeSeq: Number(r.upgradeSeq) };
  }

  async resume(session: string): Promise<Session> {
    return (await this.client.sessions.resume(session)).session;
  }

  async resumeTurn(session: string): Promise<ResumeOutcome> {
    const r = await this.client.sessions.resume(session);
    return { session: r.session, outputs: [...r.outputs] };
  }

  async approve(p: Parameters<SessionsApi["approve"]>[0]): Promise<DecisionOutcome> {
    const req = { session: p.session, reason: p.reason, ...(p.tuple ? { tuple: p.tuple } : {}) };
    const res = await (p.approved ? this.client.sessions.approve(req) : this.client.sessions.deny(req));
    return { ...res, requestSeq: Number(res.requestSeq) };
  }

  async answer(p: { session: string; text?: string; choice?: number }): Promise<DecisionOutcome> {
    const res = await (p.choice !== undefined
      ? this.client.sessions.answer({ session: p.session, choice: p.choice })
      : this.client.sessions.answer({ session: p.session, text: p.text ?? "" }));
    return { ...res, requestSeq: Number(res.requestSeq) };
  }

  cancel(p: { session: string; executionId?: string; reason: string }): Promise<Session> {
    return this.client.sessions.cancel(p);
  }

  delete(session: string): Promise<Session> {
    return this.client.sessions.delete(session);
  }

  async close(): Promise<void> {
    this.client.close();
  }
}
