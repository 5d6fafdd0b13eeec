// The initramfs writer (src/vm/cpio.ts): archives are a pure function of their entries.
import { describe, expect, it } from "vitest";
import { type CpioEntry, writeCpio } from "../../src/vm/cpio.js";

const entries: CpioEntry[] = [
  { kind: "dir", path: "app", mode: 0o755 },
  { kind: "file", path: "app/a.py", mode: 0o644, data: Buffer.from("print(1)\n") },
  { kind: "symlink", path: "lib", target: "usr/lib" },
  { kind: "file", path: "init", mode: 0o755, data: Buffer.from("#!/bin/sh\n") },
];

/** Parses a newc archive back into [name, mode, data] triples (the kernel's reading, reduced). */
function parse(buf: Buffer): [string, number, string][] {
  const out: [string, number, string][] = [];
  let off = 0;
  for (;;) {
    expect(buf.toString("latin1", off, off + 6)).toBe("070701");
    const field = (i: number) => Number.parseInt(buf.toString("latin1", off + 6 + i * 8, off + 14 + i * 8), 16);
    const mode = field(1);
    const size = field(6);
    const nameSize = field(11);
    expect(field(2)).toBe(0); // uid
    expect(field(5)).toBe(0); // mtime
    const name = buf.toString("utf8", off + 110, off + 110 + nameSize - 1);
    off += 110 + nameSize;
    off += (4 - (off % 4)) % 4;
    const data = buf.toString("utf8", off, off + size);
    off += size + ((4 - (size % 4)) % 4);
    if (name === "TRAILER!!!") return out;
    out.push([name, mode, data]);
  }
}

describe("cpio (newc) writer", () => {
  it("archive is a pure function of its entries: any input order gives the same bytes", () => {
    const a = writeCpio(entries);
    const b = writeCpio([...entries].reverse());
    expect(b.equals(a)).toBe(true);
    expect(a.length % 4).toBe(0);
  });

  it("writes every entry, sorted, with its type bits, contents and link target", () => {
    expect(parse(writeCpio(entries))).toEqual([
      ["app", 0o040755, ""],
      ["app/a.py", 0o100644, "print(1)\n"],
      ["init", 0o100755, "#!/bin/sh\n"],
      ["lib", 0o120777, "usr/lib"],
    ]);
  });

  it("refuses a path listed twice and absolute paths", () => {
    expect(() => writeCpio([...entries, { kind: "dir", path: "app", mode: 0o755 }])).toThrow(/listed twice/);
    expect(() => writeCpio([{ kind: "dir", path: "/abs", mode: 0o755 }])).toThrow(/relative/);
  });
});
