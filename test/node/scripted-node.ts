// A scripted-harness SDK node on a unix socket, with the clients node tests drive it through (the host's
// ActorsClient and a raw Actors client) and a one-turn helper. Invariant: close() releases everything
// it opened — every RemoteHarness a turn used, both clients, then the node.
import { join } from "node:path";
import { Actors } from "../../src/gen/harnesshost/v1/actors_pb.js";
import { ActorsClient, RemoteHarness, serveHarness } from "../../src/node/index.js";
import type { HarnessNode } from "../../src/node/index.js";
import { createClient } from "../../src/wire/index.js";
import type { MethodsOf, ServiceClient } from "../../src/wire/index.js";
import { RecordingSink, ScriptedHarness, startInfo } from "./fixtures.js";

export interface ScriptedNode {
  readonly node: HarnessNode;
  readonly actors: ActorsClient;
  readonly raw: ServiceClient<MethodsOf<typeof Actors>>;
  /** One turn of `command` on `session` through a fresh RemoteHarness; resolves to its outputs. */
  turn(session: string, command: string): Promise<string[]>;
  close(): Promise<void>;
}

/** Serves ScriptedHarness at `<dir>/<socket>`. */
export async function startScriptedNode(dir: string, socket = "node.sock"): Promise<ScriptedNode> {
  const node = await serveHarness(() => new ScriptedHarness(), { listen: `unix://${join(dir, socket)}` });
  const actors = new ActorsClient({ address: node.address });
  const raw = createClient(Actors, node.address);
  const remotes: RemoteHarness[] = [];
  let turnNo = 0;
  return {
    node,
    actors,
    raw,
    async turn(session, command) {
      const r = new RemoteHarness({ address: node.address, session });
      remotes.push(r);
      turnNo += 1;
      const sink = new RecordingSink();
      await r.run(startInfo(turnNo.toString(16).padStart(16, "0"), command), sink, new AbortController().signal);
      return sink.outputs();
    },
    async close() {
      for (const r of remotes) r.close();
      actors.close();
      raw.close();
      await node.close();
    },
  };
}
