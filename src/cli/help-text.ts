// The text of `harnesshost CMD --help` and of a usage error. Invariants: no line of a usage is longer
// than USAGE_WIDTH unless one bracketed flag group is (lines break between groups, never inside one);
// a command's help names every flag it accepts with the meaning it has for that command (flag-help.ts).
import type { Command } from "./command.js";
import { flagHelp } from "./flag-help.js";

/** Where usage lines wrap (characters): a terminal's 80 columns leave room for most flag groups. */
export const USAGE_WIDTH = 100;

/** Splits a usage line into words, keeping a bracketed group (`[--detach [--log-file F]]`) whole. */
function groups(line: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let word = "";
  for (const ch of line) {
    if (ch === " " && depth === 0) {
      if (word !== "") out.push(word);
      word = "";
      continue;
    }
    if (ch === "[" || ch === "(" || ch === "<") depth++;
    if (ch === "]" || ch === ")" || ch === ">") depth = Math.max(0, depth - 1);
    word += ch;
  }
  if (word !== "") out.push(word);
  return out;
}

/** `usage: harnesshost <usage>`, each form wrapped at USAGE_WIDTH with continuation lines indented. */
export function usageLines(usage: string): string[] {
  const lines: string[] = [];
  for (const [i, form] of usage.split("\n").entries()) {
    const words = groups(form.trim());
    const head = `${i === 0 ? "usage:" : "      "} harnesshost ${words.shift() ?? ""}`;
    const indent = " ".repeat(Math.min(head.length + 1, 24));
    let line = head;
    for (const word of words) {
      if (line.length + 1 + word.length > USAGE_WIDTH && line.trim() !== "") {
        lines.push(line);
        line = `${indent}${word}`;
      } else line = `${line} ${word}`;
    }
    lines.push(line);
  }
  return lines;
}

/** A command's flags, each with its meaning for this command. */
export function flagLines(command: Command): string[] {
  const names = Object.keys(command.options);
  const width = Math.min(Math.max(...names.map((n) => n.length)) + 2, 24);
  return names.map((name) => `  --${name.padEnd(width)} ${flagHelp(command.name, name) ?? ""}`.trimEnd());
}
