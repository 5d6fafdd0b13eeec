// Every figure the runner knows, in run order (cheap, self-contained figures first).
import type { Figure } from "../lib/types.js";
import { agentTurn } from "./agent-turn.js";
import { aiSdkTurn, openAIAgentsTurn } from "./adapters.js";
import { concurrentTurns } from "./concurrent.js";
import { groupCommit } from "./group-commit.js";
import { journalAppend } from "./journal-append.js";
import { longSession } from "./long-session.js";
import { manySessions } from "./many-sessions.js";
import { millionEvents } from "./million-events.js";
import { memoryTier } from "./memory-tier.js";
import { sessionMemory } from "./memory.js";
import { forkFanout } from "./fork-fanout.js";
import { firstTouchMillion, firstTouchRatio } from "./first-touch.js";
import { replay } from "./replay.js";
import { storagePerTurn } from "./storage-per-turn.js";
import { snapshotThroughput } from "./snapshot-throughput.js";
import { suspendResume } from "./suspend-resume.js";
import { turnLatency } from "./turn-latency.js";
import { wireTurn } from "./wire-turn.js";
import { serveReady } from "./serve-ready.js";
import { obsOverhead } from "./obs-overhead.js";
import { authzOverhead } from "./authz-overhead.js";
import { pgScaleout } from "./pg-scaleout.js";
import { postgresFigures } from "./postgres.js";
import { pythonEcho } from "./python-echo.js";

export const figures: readonly Figure[] = [
  journalAppend,
  groupCommit,
  replay,
  longSession,
  storagePerTurn,
  snapshotThroughput,
  suspendResume,
  memoryTier,
  turnLatency,
  wireTurn,
  serveReady,
  pythonEcho,
  forkFanout,
  concurrentTurns,
  sessionMemory,
  manySessions,
  agentTurn,
  aiSdkTurn,
  openAIAgentsTurn,
  obsOverhead,
  authzOverhead,
  postgresFigures,
  pgScaleout,
  millionEvents,
  firstTouchRatio,
  firstTouchMillion,
];
