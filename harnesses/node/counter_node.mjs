// The reference Node harness node for the vm runtime (`image build --node`): a RAM counter served over
// gRPC by the SDK's serveHarness. Invariant: the count is one module-level JavaScript number, never
// rebuilt from start.history, so only a memory snapshot (a whole-VM snapshot on the vm runtime) keeps
// it — which is what it declares, REQUIRES_MEMORY_SNAPSHOT, unless told to lie with
// `--resumability STATELESS_REPLAY`. It contains no snapshot code of its own.
//
// The count is process-wide, not per actor: in a VM the guest serves exactly one session, and a
// fork's children are copies of the whole process under new session ids (each gets a new actor from
// the factory, but the same module state).
//
// Usage: node counter_node.mjs [--resumability REQUIRES_MEMORY_SNAPSHOT|STATELESS_REPLAY]
// Listens on 0.0.0.0:$HARNESS_PORT (default 50051); prints "ready PORT" once listening.
import { getRandomValues, randomBytes, randomInt, randomUUID } from "node:crypto";
import { argv, env } from "node:process";
import { HarnessDescriptorSchema, Resumability, create, freshRandomUUID, serveHarness, textOf } from "harnesshost/sdk";

const flag = argv.indexOf("--resumability");
const declared = flag >= 0 ? argv[flag + 1] : "REQUIRES_MEMORY_SNAPSHOT";
if (declared !== "REQUIRES_MEMORY_SNAPSHOT" && declared !== "STATELESS_REPLAY") {
  console.error(`--resumability must be REQUIRES_MEMORY_SNAPSHOT or STATELESS_REPLAY, got ${declared}`);
  process.exit(2);
}

let count = 0;

function counter() {
  return {
    describe() {
      return create(HarnessDescriptorSchema, {
        id: "nodecounter",
        version: "1",
        capabilities: { resumability: Resumability[declared] },
      });
    },
    async run(start, sink, signal) {
      // The memory.fork-randomness probe, uncounted: one draw from each generator a harness may use —
      // the SDK's per-copy API and Node's own generators, which the vm guest reseeds on every restore.
      if (start.inputs.length === 1 && textOf(start.inputs[0]) === "random") {
        const draws = [
          `fresh=${freshRandomUUID()}`,
          `uuid=${randomUUID()}`,
          `webuuid=${globalThis.crypto.randomUUID()}`,
          `bytes=${randomBytes(8).toString("hex")}`,
          `values=${Buffer.from(getRandomValues(new Uint8Array(8))).toString("hex")}`,
          `int=${randomInt(2 ** 47)}`,
          `math=${Math.random()}`,
        ];
        await sink.output(`random:${draws.join(" ")}`, signal);
        return;
      }
      count += 1;
      await sink.output(String(count), signal);
    },
  };
}

const port = Number(env.HARNESS_PORT ?? "50051");
// No Actors service: the vm runtime snapshots the whole guest, not the actor.
await serveHarness(counter, { listen: `0.0.0.0:${port}`, actors: false });
console.log(`ready ${port}`);
