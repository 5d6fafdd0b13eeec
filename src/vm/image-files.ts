// What goes into a guest root besides the program: the interpreter, the library files the program
// was seen to load, the shared objects they link, busybox and the kernel's virtio modules. Invariant:
// every path is copied at the path the host uses (top-level symlinks such as /lib → usr/lib are
// reproduced), so the guest interpreter resolves exactly what it resolved on the build machine.
import { spawnSync } from "node:child_process";
import { lstatSync, readFileSync, readlinkSync, readdirSync, realpathSync } from "node:fs";
import { dirname, join, posix, resolve } from "node:path";
import { ErrorCode, HostError } from "../errors/index.js";
import type { CpioEntry } from "./cpio.js";

/** The guest tree being assembled: relative path → entry. */
export class GuestTree {
  private readonly entries = new Map<string, CpioEntry>();

  private dirs(path: string): void {
    const parts = path.split("/");
    for (let i = 1; i < parts.length; i++) {
      const dir = parts.slice(0, i).join("/");
      if (!this.entries.has(dir)) this.entries.set(dir, { kind: "dir", path: dir, mode: 0o755 });
    }
  }

  addFile(path: string, data: Uint8Array, mode: number): void {
    this.dirs(path);
    this.entries.set(path, { kind: "file", path, mode, data });
  }

  addSymlink(path: string, target: string): void {
    this.dirs(path);
    this.entries.set(path, { kind: "symlink", path, target });
  }

  addDir(path: string): void {
    this.dirs(`${path}/x`);
  }

  has(path: string): boolean {
    return this.entries.has(path);
  }

  /**
   * Copies a host file (absolute path) to the same path in the guest, recreating every symlink met on
   * the way (a top-level directory link like /lib → usr/lib, or libz.so.1 → libz.so.1.2.13).
   */
  copyHostPath(abs: string, depth = 0): void {
    if (depth > 16) throw new HostError(ErrorCode.InvalidArgument, `too many symlinks resolving ${abs}`);
    const parts = resolve(abs).split("/").filter(Boolean);
    let host = "";
    for (let i = 0; i < parts.length; i++) {
      host = `${host}/${parts[i]}`;
      const st = lstatSync(host);
      const rel = host.slice(1);
      if (st.isSymbolicLink()) {
        const target = readlinkSync(host);
        if (!this.entries.has(rel)) this.addSymlink(rel, target);
        const rest = parts.slice(i + 1).join("/");
        const next = posix.resolve(dirname(host), target);
        return this.copyHostPath(rest ? `${next}/${rest}` : next, depth + 1);
      }
      if (i === parts.length - 1) {
        if (st.isDirectory()) this.addDir(rel);
        else if (!this.entries.has(rel)) this.addFile(rel, readFileSync(host), st.mode & 0o755);
      }
    }
  }

  /** Copies a host directory tree to `guestDir` (regular files and symlinks, sorted). */
  copyDir(hostDir: string, guestDir: string): void {
    this.addDir(guestDir);
    for (const name of readdirSync(hostDir).sort()) {
      if (name === "__pycache__") continue;
      const h = join(hostDir, name);
      const g = `${guestDir}/${name}`;
      const st = lstatSync(h);
      if (st.isDirectory()) this.copyDir(h, g);
      else if (st.isSymbolicLink()) this.addSymlink(g, readlinkSync(h));
      else if (st.isFile()) this.addFile(g, readFileSync(h), st.mode & 0o755);
    }
  }

  /** The Python sources in the tree (guest path → bytes), for bytecode compilation. */
  pythonSources(): { path: string; data: Uint8Array }[] {
    const out: { path: string; data: Uint8Array }[] = [];
    for (const e of this.entries.values()) if (e.kind === "file" && e.path.endsWith(".py")) out.push(e);
    return out;
  }

  list(): CpioEntry[] {
    return [...this.entries.values()];
  }
}

/** The shared objects an ELF file links, as absolute host paths (from ldd). */
export function sharedObjects(elf: string): string[] {
  const r = spawnSync("ldd", [elf], { encoding: "utf8" });
  if (r.status !== 0) return []; // statically linked or not an ELF: nothing to add
  const libs: string[] = [];
  for (const line of r.stdout.split("\n")) {
    const m = /=>\s+(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s+\(/.exec(line);
    if (m?.[1]) libs.push(m[1]);
  }
  return libs.sort();
}

export interface KernelChoice {
  readonly release: string;
  readonly vmlinuz: string;
  readonly modulesDir: string;
}

/** The newest Debian cloud kernel installed (linux-image-cloud-amd64); FailedPrecondition when none. */
export function findKernel(boot = "/boot"): KernelChoice {
  let names: string[] = [];
  try {
    names = readdirSync(boot).filter((n) => /^vmlinuz-.*-cloud-amd64$/.test(n));
  } catch {
    names = [];
  }
  const release = names
    .map((n) => n.slice("vmlinuz-".length))
    .sort((a, b) => a.localeCompare(b, "en", { numeric: true }))
    .at(-1);
  if (release === undefined)
    throw new HostError(
      ErrorCode.FailedPrecondition,
      "no guest kernel: install the Debian package linux-image-cloud-amd64 (apt-get install linux-image-cloud-amd64)",
    );
  return { release, vmlinuz: join(boot, `vmlinuz-${release}`), modulesDir: `/lib/modules/${release}` };
}

/** The guest's virtio network driver and everything it depends on, in load order (from modules.dep). */
export function moduleLoadOrder(modulesDir: string, wanted: readonly string[]): string[] {
  const deps = new Map<string, string[]>();
  for (const line of readFileSync(join(modulesDir, "modules.dep"), "utf8").split("\n")) {
    const [mod, rest] = line.split(":");
    if (mod && rest !== undefined) deps.set(mod, rest.trim() ? rest.trim().split(/\s+/) : []);
  }
  const byName = new Map<string, string>();
  for (const mod of deps.keys()) byName.set(posix.basename(mod).replace(/\.ko(\.\w+)?$/, ""), mod);
  const order: string[] = [];
  const visit = (mod: string): void => {
    if (order.includes(mod)) return;
    for (const d of deps.get(mod) ?? []) visit(d);
    order.push(mod);
  };
  for (const name of wanted) {
    const mod = byName.get(name);
    if (mod === undefined)
      throw new HostError(ErrorCode.FailedPrecondition, `kernel module ${name} not found in ${modulesDir}`);
    if (!mod.endsWith(".ko"))
      throw new HostError(
        ErrorCode.FailedPrecondition,
        `kernel module ${mod} is compressed; busybox insmod needs plain .ko files`,
      );
    visit(mod);
  }
  return order;
}

export function realpath(path: string): string {
  return realpathSync(path);
}
