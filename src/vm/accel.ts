// Which accelerator QEMU uses for guests, decided once per process. Invariant: KVM is chosen only
// where it can really run a stock guest — /dev/kvm opens read-write AND the CPU advertises hardware
// virtualisation (vmx/svm); paravirtualised nested KVM (PVM) exposes /dev/kvm without vmx and fails
// guests with "KVM internal error", so it gets TCG. HARNESSHOST_VM_ACCEL=tcg|kvm overrides.
import { spawnSync } from "node:child_process";
import { accessSync, constants, readFileSync } from "node:fs";
import { ErrorCode, HostError } from "../errors/index.js";

export type Accel = "kvm" | "tcg";

export interface AccelChoice {
  readonly accel: Accel;
  /** One line saying why, for logs and bench output. */
  readonly reason: string;
  /** The QEMU arguments selecting it. */
  readonly args: readonly string[];
}

export const QEMU = "qemu-system-x86_64";

function argsOf(accel: Accel): string[] {
  return accel === "kvm" ? ["-accel", "kvm", "-cpu", "host"] : ["-accel", "tcg", "-cpu", "max"];
}

function hardwareVirt(): { ok: boolean; why: string } {
  try {
    accessSync("/dev/kvm", constants.R_OK | constants.W_OK);
  } catch {
    return { ok: false, why: "/dev/kvm is not usable" };
  }
  let flags = "";
  try {
    flags = readFileSync("/proc/cpuinfo", "utf8");
  } catch {
    return { ok: false, why: "/proc/cpuinfo is unreadable" };
  }
  if (!/^flags\s*:.*\b(vmx|svm)\b/m.test(flags))
    return { ok: false, why: "/dev/kvm exists but the CPU has no vmx/svm flag (paravirtualised KVM such as PVM)" };
  return { ok: true, why: "/dev/kvm is usable and the CPU has vmx/svm" };
}

let chosen: AccelChoice | undefined;

/** The accelerator for this process (decided at first use, then fixed). */
export function chooseAccel(env: NodeJS.ProcessEnv = process.env): AccelChoice {
  if (chosen) return chosen;
  const forced = env.HARNESSHOST_VM_ACCEL;
  if (forced !== undefined && forced !== "") {
    if (forced !== "kvm" && forced !== "tcg")
      throw new HostError(
        ErrorCode.InvalidArgument,
        `HARNESSHOST_VM_ACCEL must be kvm or tcg, got ${JSON.stringify(forced)}`,
      );
    chosen = { accel: forced, reason: `HARNESSHOST_VM_ACCEL=${forced}`, args: argsOf(forced) };
    return chosen;
  }
  const hw = hardwareVirt();
  chosen = hw.ok
    ? { accel: "kvm", reason: hw.why, args: argsOf("kvm") }
    : { accel: "tcg", reason: `software emulation: ${hw.why}`, args: argsOf("tcg") };
  return chosen;
}

/** Whether QEMU is installed; the reason when it is not. */
export function qemuAvailable(): { ok: true; version: string } | { ok: false; reason: string } {
  const r = spawnSync(QEMU, ["--version"], { encoding: "utf8" });
  if (r.status !== 0)
    return {
      ok: false,
      reason: `${QEMU} is not installed (Debian package qemu-system-x86): ${r.error?.message ?? r.stderr}`,
    };
  return { ok: true, version: (r.stdout.split("\n")[0] ?? "").trim() };
}
