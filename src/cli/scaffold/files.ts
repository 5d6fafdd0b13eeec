// The files `harnesshost init` writes: a runnable TypeScript project (docs/testing.md, "A new
// project"). Invariant: every file is a pure function of the project name and the pinned versions, so
// the scaffold is the same on every machine and a CI test (test/scaffold/) runs exactly what a user gets.

/** The versions a new project pins: harnesshost is the running one, the rest what it was built with. */
export interface ScaffoldVersions {
  readonly harnesshost: string;
  readonly zod: string;
  readonly typescript: string;
  readonly nodeTypes: string;
}

const TSCONFIG = {
  compilerOptions: {
    target: "ES2022",
    module: "NodeNext",
    moduleResolution: "NodeNext",
    strict: true,
    noUncheckedIndexedAccess: true,
    exactOptionalPropertyTypes: true,
    skipLibCheck: true,
    types: ["node"],
    rootDir: ".",
    outDir: "dist",
    sourceMap: true,
  },
  include: ["src", "test"],
};

function packageJson(name: string, v: ScaffoldVersions): string {
  const serve =
    "harnesshost serve --harness greeter=local:./dist/src/greeter.js --harness desk=local:./dist/src/desk.js --tools ./dist/src/tools.js";
  const pkg = {
    name,
    version: "0.1.0",
    private: true,
    type: "module",
    engines: { node: ">=20" },
    scripts: {
      build: "tsc -p .",
      typecheck: "tsc -p . --noEmit",
      test: "tsc -p . && node --test dist/test/",
      serve: `tsc -p . && ${serve}`,
      conformance:
        "tsc -p . && harnesshost conformance --harness ./dist/src/greeter.js && harnesshost conformance --harness ./dist/src/desk.js",
    },
    dependencies: { harnesshost: v.harnesshost, zod: v.zod },
    devDependencies: { "@types/node": v.nodeTypes, typescript: v.typescript },
  };
  return `${JSON.stringify(pkg, null, 2)}\n`;
}

const GREETER = `// A stateless harness written with the SDK (docs/harness-authoring.md): each turn is one model call
// whose request depends only on the turn's input, so the host can replay, resume and fork it from the
// journal alone (STATELESS_REPLAY). The host records the completion as the turn's OUTPUT.
import { create, HarnessDescriptorSchema, Resumability, textMessage, textOf } from "harnesshost/sdk";
import type { EventSink, Harness, HarnessDescriptor, StartInfo } from "harnesshost/sdk";

export const GREETER_PROMPT = "Greet the person whose name you are given, in one short sentence.";

class Greeter implements Harness {
  describe(): HarnessDescriptor {
    return create(HarnessDescriptorSchema, {
      id: "greeter",
      version: "1",
      capabilities: { resumability: Resumability.STATELESS_REPLAY, forkSafe: true },
    });
  }

  async run(start: StartInfo, sink: EventSink, signal: AbortSignal): Promise<void> {
    const name = textOf(start.inputs.at(-1));
    await sink.model(
      { model: "gpt-4o-mini", messages: [textMessage("system", GREETER_PROMPT), textMessage("user", name)] },
      signal,
    );
  }
}

/** A harness module's default export is its factory: one instance per session. */
export default function greeter(): Harness {
  return new Greeter();
}
`;

const DESK = `// An agent built with the agent kit (docs/agents.md): it books meeting rooms with the host-mediated
// tool \`desk.book\`. The host runs the tool (src/tools.ts, served with \`serve --tools\`) only after an
// operator approves the call, and at most once per idempotency key.
import { z } from "zod";
import { agent, tool } from "harnesshost/agent";
import type { Harness } from "harnesshost/sdk";

/** The tool's arguments: the same schema the agent offers the model and the host checks (src/tools.ts). */
export const BookArgs = z.object({
  room: z.string().min(1).describe("the room's name or number"),
  day: z.string().min(1).describe("the day to book it for"),
});

export const book = tool({
  name: "desk.book",
  description: "Books a meeting room for a day.",
  args: BookArgs,
  approval: "always",
});

export default function desk(): Harness {
  return agent({
    id: "desk",
    model: "gpt-4o-mini",
    system: "You book meeting rooms. Use desk.book, then say what you booked.",
    tools: [book],
  });
}
`;

const TOOLS = `// The host-mediated tools this project's host runs (\`harnesshost serve --tools ./dist/src/tools.js\`,
// docs/harness-authoring.md "Your own host-mediated tools"): tool name → { args, run }. The host checks
// the arguments against \`args\` before \`run\`, runs a call only when the operator's policy allows it
// (desk.book always asks for an approval), and runs it at most once per idempotency key.
import { hostTool } from "harnesshost";
import { BookArgs } from "./desk.js";

export default {
  "desk.book": hostTool({
    description: "Books a meeting room for a day.",
    args: BookArgs,
    // Replace with the real booking. Pass ctx.idempotencyKey on to the system you call, so that a
    // retried call cannot book twice.
    run: ({ room, day }, ctx) => ({ booked: true, room, day, confirmation: ctx.idempotencyKey }),
  }),
};
`;

const GREETER_TEST = `// The greeter against a scripted model, on an in-process host (harnesshost/testing, docs/testing.md).
import assert from "node:assert/strict";
import { test } from "node:test";
import { expecting, lastText, openTestHost, say } from "harnesshost/testing";
import greeter from "../src/greeter.js";

test("the greeter sends the name and answers with the model's greeting", async (t) => {
  const host = await openTestHost({
    harnesses: { greeter },
    model: [expecting((req) => assert.equal(lastText(req), "Ada"), say("Hello, Ada!"))],
  });
  t.after(() => host.close());

  const session = await host.session();
  const turn = await session.exec("Ada");
  assert.equal(turn.text, "Hello, Ada!");

  // The journal verifies, and replay re-runs the turn from it without calling the model.
  await session.verify();
  assert.deepEqual(await session.replay(), ["Hello, Ada!"]);
  assert.equal(host.script.verify(), 1);
});
`;

const DESK_TEST = `// The desk agent's booking: parked for approval, then run exactly once (harnesshost/testing).
import assert from "node:assert/strict";
import { test } from "node:test";
import { calls, expecting, lastText, openTestHost, say } from "harnesshost/testing";
import desk from "../src/desk.js";
import tools from "../src/tools.js";

test("a booking waits for an approval, then books the room once", async (t) => {
  const host = await openTestHost({
    harnesses: { desk },
    model: [
      expecting(
        (req) => assert.equal(lastText(req), "Book room 4 for Friday"),
        calls(["desk.book", { room: "4", day: "Friday" }]),
      ),
      expecting((req) => assert.match(lastText(req), /"booked":true/), say("Room 4 is booked for Friday.")),
    ],
    tools,
  });
  t.after(() => host.close());

  const session = await host.session();
  const first = await session.exec("Book room 4 for Friday");
  assert.equal(first.parked?.tool, "desk.book");
  assert.deepEqual(first.parked?.args, { room: "4", day: "Friday" });
  assert.equal(host.toolRuns.length, 0);

  await session.approve();
  const done = await session.resume();
  assert.equal(done.text, "Room 4 is booked for Friday.");
  assert.equal(host.toolRuns.length, 1);
  host.script.verify();
});

test("a denied booking never runs the tool", async (t) => {
  const host = await openTestHost({
    harnesses: { desk },
    model: [calls(["desk.book", { room: "9", day: "Monday" }]), say("Sorry, room 9 is not available.")],
    tools,
  });
  t.after(() => host.close());

  const session = await host.session();
  await session.exec("Book room 9 for Monday");
  await session.deny("room 9 is closed");
  assert.equal((await session.resume()).text, "Sorry, room 9 is not available.");
  assert.equal(host.toolRuns.length, 0);
});
`;

function readme(name: string, v: ScaffoldVersions): string {
  return `# ${name}

A harnesshost project (harnesshost ${v.harnesshost}): two harnesses and a tool.

- \`src/greeter.ts\` — a stateless harness written with the SDK: one model call per turn.
- \`src/desk.ts\` — an agent with a host-mediated tool, \`desk.book\`, that needs an operator's approval.
- \`src/tools.ts\` — what the host runs for \`desk.book\` (\`serve --tools\`).
- \`test/\` — tests on an in-process host with a scripted model (\`harnesshost/testing\`, \`node:test\`).

\`\`\`sh
npm install
npm test              # compile, then run the tests
npm run typecheck     # tsc against harnesshost's types
npm run conformance   # the tier conformance suite against both harnesses
npm run serve         # a host on 127.0.0.1:7233 serving greeter and desk (echo model; Ctrl-C stops it)
\`\`\`

With the host running, in another terminal:

\`\`\`sh
npx harnesshost exec --server 127.0.0.1:7233 --harness greeter --input Ada
\`\`\`

The echo model only repeats its input; to talk to a real model, serve with \`--model URL\` (any
OpenAI-compatible endpoint; key in \`MODEL_API_KEY\`): \`npm run serve -- --model https://…/v1\`. The
desk agent's bookings then park for approval: \`npx harnesshost approve --server 127.0.0.1:7233
--session ID\`, then \`resume\`.

Docs: \`node_modules/harnesshost/docs/\` — testing.md, harness-authoring.md, agents.md, cli.md.
`;
}

const GITIGNORE = "node_modules/\ndist/\n.harnesshost/\n";

/** The project's files, by path relative to its directory. */
export function scaffoldFiles(name: string, versions: ScaffoldVersions): Readonly<Record<string, string>> {
  return {
    "package.json": packageJson(name, versions),
    "tsconfig.json": `${JSON.stringify(TSCONFIG, null, 2)}\n`,
    "README.md": readme(name, versions),
    ".gitignore": GITIGNORE,
    "src/greeter.ts": GREETER,
    "src/desk.ts": DESK,
    "src/tools.ts": TOOLS,
    "test/greeter.test.ts": GREETER_TEST,
    "test/desk.test.ts": DESK_TEST,
  };
}
