// The command table. Invariant: every command the CLI knows is listed here exactly once.
import type { Command } from "../command.js";
import { exportCommand, verifyCommand } from "./journal.js";
import {
  answerCommand,
  approveCommand,
  execCommand,
  forkCommand,
  getCommand,
  listCommand,
  replayCommand,
  resumeCommand,
  suspendCommand,
} from "./sessions.js";

export const commands: Command[] = [
  execCommand,
  replayCommand,
  forkCommand,
  getCommand,
  listCommand,
  suspendCommand,
  resumeCommand,
  approveCommand,
  answerCommand,
  exportCommand,
  verifyCommand,
];

/** Adds a command (serve, node, harness, conformance, … register themselves from their modules). */
export function addCommand(command: Command): void {
  if (commands.some((c) => c.name === command.name)) throw new Error(`command ${command.name} registered twice`);
  commands.push(command);
}
