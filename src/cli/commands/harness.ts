// `harnesshost harness register|get|list|retire|free`: the operator client of HarnessRegistry. Invariants:
// it only ever talks to the registry listener named by --server; --json prints proto3-JSON with proto
// field names (one document); the spec is built from flags and validated by the server, not here.
import { toJson } from "@bufbuild/protobuf";
import {
  HarnessRegistrationSchema,
  HarnessSource,
  HarnessState,
  RegisterHarnessResponseSchema,
  RegisterOutcome,
  type HarnessRegistration,
} from "../../gen/agentsessions/v1/harness_registry_pb.js";
import { connect, type HarnessesClient, type RegisterHarness, type VersionsClient } from "../../client/index.js";
import { HarnessVersionSchema, type HarnessVersion } from "../../gen/harnesshost/v1/versions_pb.js";
import { int, json, requireStr, str, UsageError, type Command, type CommandContext } from "../command.js";
import { remoteConnectOptions } from "../grpc-api.js";

/** Registry calls are operator actions: bounded so a wrong address fails instead of hanging. */
const RPC_TIMEOUT_MS = 30_000;

const RESUMABILITY: readonly RegisterHarness["resumability"][] = ["STATELESS_REPLAY", "REQUIRES_MEMORY_SNAPSHOT"];

function registrationJson(reg: HarnessRegistration): unknown {
  return toJson(HarnessRegistrationSchema, reg, { useProtoFieldName: true });
}

function registrationLine(reg: HarnessRegistration): string {
  const source = (HarnessSource[reg.source] ?? "").toLowerCase();
  const state = (HarnessState[reg.state] ?? "").toLowerCase();
  const address = reg.spec?.placement.case === "remote" ? ` address=${reg.spec.placement.value.address}` : "";
  const digest = reg.specDigest ? ` digest=${reg.specDigest}` : "";
  const unservable = reg.unservableReason ? ` unservable=${JSON.stringify(reg.unservableReason)}` : "";
  const observed = reg.observed ? ` observed=${reg.observed.id}@${reg.observed.version}` : "";
  const observeError = reg.observeError ? ` observe_error=${JSON.stringify(reg.observeError)}` : "";
  return `harness ${reg.metadata?.name ?? ""} source=${source} state=${state}${address}${digest}${observed}${observeError}${unservable}`;
}

/**
 * One version of a harness: `version NAME@V state=… default=… [build=sha256:…] pinned=N [sessions=a,b]
 * [pinned_builds=sha256:…,…]` (build: what this host serves; pinned_builds: what the pinned sessions ran).
 */
function versionLine(v: HarnessVersion): string {
  const key = v.version === "" ? v.name : `${v.name}@${v.version}`;
  const build = v.buildDigest !== "" ? ` build=${v.buildDigest}` : "";
  const sessions = v.pinnedSessions.length > 0 ? ` sessions=${v.pinnedSessions.join(",")}` : "";
  const builds = v.pinnedDigests.length > 0 ? ` pinned_builds=${v.pinnedDigests.join(",")}` : "";
  return `version ${key} source=${v.source} state=${v.state} default=${v.isDefault}${build} pinned=${v.pinnedSessions.length}${sessions}${builds}`;
}

async function run(ctx: CommandContext): Promise<number> {
  const [sub, ...extra] = ctx.positionals;
  if (extra.length > 0) throw new UsageError(`unexpected arguments: ${extra.join(" ")}`);
  const server = requireStr(ctx.values, "server");
  const opts = { timeoutMs: RPC_TIMEOUT_MS };
  const callVersions = async <T>(fn: (client: VersionsClient) => Promise<T>): Promise<T> => {
    const client = connect({ ...remoteConnectOptions(ctx.values, server), registryAddress: server });
    try {
      return await fn(client.versions);
    } finally {
      client.close();
    }
  };
  const call = async <T>(fn: (client: HarnessesClient) => Promise<T>): Promise<T> => {
    const client = connect({ ...remoteConnectOptions(ctx.values, server), registryAddress: server });
    try {
      return await fn(client.harnesses);
    } finally {
      client.close();
    }
  };
  switch (sub) {
    case "register": {
      const name = requireStr(ctx.values, "name");
      const address = requireStr(ctx.values, "address");
      const resumability = RESUMABILITY.find((r) => r === requireStr(ctx.values, "resumability"));
      if (resumability === undefined) throw new UsageError(`--resumability must be ${RESUMABILITY.join(" or ")}`);
      const descriptorId = str(ctx.values, "descriptor-id");
      const version = str(ctx.values, "version");
      const res = await call((c) =>
        c.register(
          {
            name,
            address,
            resumability,
            ...(descriptorId !== undefined ? { descriptorId } : {}),
            ...(version !== undefined ? { version } : {}),
          },
          opts,
        ),
      );
      if (json(ctx.values))
        ctx.out(JSON.stringify(toJson(RegisterHarnessResponseSchema, res, { useProtoFieldName: true })));
      else
        ctx.out(
          `${(RegisterOutcome[res.outcome] ?? "").toLowerCase()} ${res.harness ? registrationLine(res.harness) : ""}`,
        );
      return 0;
    }
    case "get": {
      const name = requireStr(ctx.values, "name");
      const reg = await call((c) => c.get(name, { observe: ctx.values["observe"] === true }, opts));
      ctx.out(json(ctx.values) ? JSON.stringify(registrationJson(reg)) : registrationLine(reg));
      return 0;
    }
    case "list": {
      const includeRetired = ctx.values["include-retired"] === true;
      const pageSize = int(ctx.values, "page-size", 0);
      const all = await call(async (c) => {
        const out: HarnessRegistration[] = [];
        for await (const reg of c.list({ pageSize, includeRetired }, opts)) out.push(reg);
        return out;
      });
      const versions = await callVersions((v) => v.list("", opts));
      if (json(ctx.values))
        ctx.out(
          JSON.stringify({
            harnesses: all.map(registrationJson),
            versions: versions.map((v) => toJson(HarnessVersionSchema, v, { useProtoFieldName: true })),
          }),
        );
      else {
        for (const reg of all) ctx.out(registrationLine(reg));
        for (const v of versions) ctx.out(versionLine(v));
      }
      return 0;
    }
    case "retire": {
      const name = requireStr(ctx.values, "name");
      const version = str(ctx.values, "version");
      if (version !== undefined) {
        const force = ctx.values["force"] === true;
        const reason = str(ctx.values, "reason") ?? "";
        const v = await callVersions((c) => c.retire(name, version, { reason, force }, opts));
        ctx.out(
          json(ctx.values)
            ? JSON.stringify(toJson(HarnessVersionSchema, v, { useProtoFieldName: true }))
            : versionLine(v),
        );
        return 0;
      }
      if (ctx.values["force"] === true) throw new UsageError("--force retires one version: give --version");
      const reg = await call((c) => c.retire(name, { reason: str(ctx.values, "reason") ?? "" }, opts));
      ctx.out(json(ctx.values) ? JSON.stringify(registrationJson(reg)) : registrationLine(reg));
      return 0;
    }
    case "free": {
      const name = requireStr(ctx.values, "name");
      const version = str(ctx.values, "version");
      const reg = await call((c) => c.free(version !== undefined ? `${name}@${version}` : name, opts));
      ctx.out(json(ctx.values) ? JSON.stringify(registrationJson(reg)) : `freed ${registrationLine(reg)}`);
      return 0;
    }
    case undefined:
      throw new UsageError("a subcommand is required: register, get, list, retire or free");
    default:
      throw new UsageError(`unknown subcommand ${JSON.stringify(sub)}`);
  }
}

export const harnessCommand: Command = {
  name: "harness",
  usage:
    "harness register --server REGISTRY --name N [--version V] --address ADDR --resumability STATELESS_REPLAY|REQUIRES_MEMORY_SNAPSHOT [--descriptor-id ID] [--json]\n" +
    "       harness get --server REGISTRY --name N[@V] [--observe] [--json]\n" +
    "       harness list --server REGISTRY [--include-retired] [--page-size N] [--json]\n" +
    "       harness retire --server REGISTRY --name N [--version V [--force]] [--reason R] [--json]\n" +
    "       harness free --server REGISTRY --name N [--version V] [--json]   (a retired registration only; its sessions stay readable)",
  options: {
    server: { type: "string" },
    "token-file": { type: "string" },
    "tls-ca": { type: "string" },
    "tls-cert": { type: "string" },
    "tls-key": { type: "string" },
    json: { type: "boolean" },
    name: { type: "string" },
    address: { type: "string" },
    resumability: { type: "string" },
    "descriptor-id": { type: "string" },
    observe: { type: "boolean" },
    "include-retired": { type: "boolean" },
    "page-size": { type: "string" },
    reason: { type: "string" },
    version: { type: "string" },
    force: { type: "boolean" },
  },
  run,
};
