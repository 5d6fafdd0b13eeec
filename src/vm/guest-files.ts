// The guest-side scripts of a vm image, kept as TypeScript strings so they ship inside the compiled
// package (dist/) like any module. Invariant: the builder writes exactly these bytes — into the image
// (init, agent.py) or into a private temporary directory on the build machine (probe.py, compile.py,
// agent-files.py) — and hashes them into the build cache key, so changing a script rebuilds every image.
// Edit the Python/shell text here; each constant is one file.

/** Where each reseedable runtime in the guest listens (a unix socket named by its pid) for the agent's "reseed". */
export const RESEED_DIR = "/run/harnesshost/reseed";

/** agent.py */
export const AGENT_PY = `"""The guest control agent: the one process in the guest besides the harness node. It reads commands
from the second serial port (/dev/ttyS1, a unix socket on the host) and answers each on one line.

  reseed UNIX_NS HEX  ->  reseeded UNIX_NS RUNTIMES
      Sets CLOCK_REALTIME to UNIX_NS, adds the HEX bytes to the kernel entropy pool (credited) and
      forces the kernel CRNG to reseed, so os.urandom/getrandom in every restored or forked copy of
      a snapshot diverge at once and the wall clock is the host's again; then tells every language
      runtime listening in ${RESEED_DIR} (the harness program's reseed hook) to reseed from the
      reseeded kernel and waits for each to confirm. RUNTIMES is how many did; one that does not
      within RUNTIME_TIMEOUT_S is an error. The monotonic clock is not touched: it continues from
      the snapshot.

  probe  ->  probe UNIX_NS HEX
      The guest's wall clock and 16 bytes from os.urandom (tests check that copies diverge).

Stdlib only; runs as root (pid 1's child) so it may set the clock and reseed.
"""
import fcntl
import os
import socket
import struct
import termios
import time
import tty

RNDADDENTROPY = 0x40085203
RNDRESEEDCRNG = 0x5207
RESEED_DIR = "${RESEED_DIR}"
RUNTIME_TIMEOUT_S = 20


def reseed(unix_ns, seed):
    time.clock_settime_ns(time.CLOCK_REALTIME, unix_ns)
    fd = os.open("/dev/urandom", os.O_WRONLY)
    try:
        fcntl.ioctl(fd, RNDADDENTROPY, struct.pack("ii", len(seed) * 8, len(seed)) + seed)
        fcntl.ioctl(fd, RNDRESEEDCRNG)
    finally:
        os.close(fd)


def reseed_runtimes():
    """Asks each runtime listening in RESEED_DIR to reseed; how many confirmed. A socket nobody
    listens on any more (its process exited) is removed."""
    try:
        names = sorted(n for n in os.listdir(RESEED_DIR) if n.endswith(".sock"))
    except FileNotFoundError:
        return 0
    confirmed = 0
    for name in names:
        path = os.path.join(RESEED_DIR, name)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.settimeout(RUNTIME_TIMEOUT_S)
            try:
                conn.connect(path)
            except (ConnectionRefusedError, FileNotFoundError):
                try:
                    os.unlink(path)
                except OSError:
                    pass
                continue
            conn.sendall(b"reseed\\n")
            with conn.makefile("rb") as reader:
                answer = reader.readline(64)
        if answer != b"reseeded\\n":
            raise OSError(f"runtime {name[:-5]} answered {answer[:80]!r} to reseed")
        confirmed += 1
    return confirmed


def main():
    fd = os.open("/dev/ttyS1", os.O_RDWR | os.O_NOCTTY)
    tty.setraw(fd, termios.TCSANOW)
    buf = b""
    while True:
        chunk = os.read(fd, 4096)
        if not chunk:
            time.sleep(0.05)
            continue
        buf += chunk
        while b"\\n" in buf:
            line, buf = buf.split(b"\\n", 1)
            words = line.decode("ascii", "replace").split()
            if len(words) == 3 and words[0] == "reseed":
                try:
                    reseed(int(words[1]), bytes.fromhex(words[2]))
                    answer = f"reseeded {words[1]} {reseed_runtimes()}"
                except (ValueError, OSError) as err:
                    answer = f"error {err}"
            elif words == ["probe"]:
                answer = f"probe {time.time_ns()} {os.urandom(16).hex()}"
            else:
                answer = "error unknown command"
            os.write(fd, (answer + "\\n").encode("ascii"))


main()
`;

/** compile.py */
export const COMPILE_PY = `"""Image-build step: compiles every Python source of a staged guest tree to bytecode, so the guest
never compiles at boot (slow under software emulation). Pycs are "unchecked-hash" (PEP 552): valid
whatever the file times, and a pure function of the source, so images stay reproducible. Each code
object is named by its guest path (the staging prefix stripped).

Usage: python3 -B -s compile.py STAGING_DIR
"""
import compileall
import py_compile
import sys

staging = sys.argv[1]
ok = compileall.compile_dir(
    staging,
    quiet=1,
    stripdir=staging,
    prependdir="/",
    invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
    workers=1,
)
sys.exit(0 if ok else 1)
`;

/** init.sh */
export const INIT_SH = `#!/usr/bin/busybox sh
# The guest's pid 1 (generated into every vm image; @MODULES@ and @COMMAND@ are filled in at build
# time). Mounts the kernel filesystems, loads the virtio network driver, brings up the user-mode
# network (10.0.2.15, gateway 10.0.2.2), starts the control agent on ttyS1 and the harness program,
# then waits forever: pid 1 must never exit. Everything lives in the initramfs (RAM), so a whole-VM
# snapshot holds the complete guest.
bb=/usr/bin/busybox
$bb mount -t proc proc /proc
$bb mount -t sysfs sysfs /sys
$bb mount -t devtmpfs devtmpfs /dev
$bb mkdir -p /tmp
$bb mount -t tmpfs tmpfs /tmp
for m in @MODULES@; do $bb insmod "/lib/modules/@RELEASE@/$m" || echo "init: insmod $m failed" >/dev/ttyS0; done
$bb ip link set lo up
$bb ip link set eth0 up
$bb ip addr add 10.0.2.15/24 dev eth0
$bb ip route add default via 10.0.2.2
export PATH=/usr/bin:/bin HOME=/app HARNESS_PORT=@PORT@ PYTHONDONTWRITEBYTECODE=1 LANG=C.UTF-8
cd /app
@PYTHON@ -B -s /hh/agent.py </dev/null >/dev/ttyS0 2>&1 &
@COMMAND@ </dev/null >/dev/ttyS0 2>&1 &
while true; do $bb sleep 3600; done
`;

/** probe.py */
export const PROBE_PY = `"""Image-build probe: runs a harness program on the build machine until it listens on HARNESS_PORT,
asks it once to Describe itself over gRPC when grpc is importable (so the modules a served call
loads are seen too), then prints, as one JSON line on stdout, every file the interpreter loaded:
module sources, packages and extension modules. The image builder copies exactly these files (plus
the shared libraries they link) into the guest, so the guest interpreter finds what the program
imports and nothing else.

Usage: python3 -B -s probe.py PORT DEADLINE_S FILE [ARGS...]
"""
# The guest control agent (agent.py) runs beside the program under the same interpreter: its imports
# are loaded here so that they are listed too.
import fcntl  # noqa: F401
import json
import os
import random  # noqa: F401  (the program runs under reseed_hook.py in the guest, which imports it)
import runpy
import socket
import sys
import threading
import termios  # noqa: F401
import time
import tty  # noqa: F401


def listening(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def loaded_files():
    files = set()
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if isinstance(path, str) and os.path.isabs(path) and os.path.exists(path):
            files.add(path)
    return sorted(files)


def describe_once(port):
    try:
        import grpc
    except ImportError:
        return
    with grpc.insecure_channel(f"127.0.0.1:{port}", options=[("grpc.enable_http_proxy", 0)]) as channel:
        call = channel.unary_unary("/agentsessions.v1.Harness/Describe")
        try:
            call(b"", timeout=10)
        except grpc.RpcError:
            pass


def main():
    port, deadline_s, program, args = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3], sys.argv[4:]
    os.environ["HARNESS_PORT"] = str(port)
    failure = []

    def run():
        sys.argv = [program, *args]
        try:
            runpy.run_path(program, run_name="__main__")
            failure.append("the program returned")
        except BaseException as err:  # the program exiting early is reported below
            failure.append(repr(err))

    sys.path.insert(0, os.path.dirname(os.path.abspath(program)))
    threading.Thread(target=run, daemon=True).start()
    deadline = time.monotonic() + deadline_s
    while not listening(port):
        if failure or time.monotonic() > deadline:
            print(json.dumps({"error": failure[0] if failure else f"not listening on port {port} after {deadline_s} s"}), flush=True)
            os._exit(3)
        time.sleep(0.05)
    describe_once(port)
    print(json.dumps({"files": loaded_files(), "executable": os.path.realpath(sys.executable)}), flush=True)
    os._exit(0)


main()
`;

/** agent-files.py */
export const AGENT_FILES_PY = `"""Image-build step for images whose program is not Python (image build --node): imports what the
guest control agent (agent.py) imports, under the flags the guest runs it with, then prints as one
JSON line every file the interpreter loaded, and the interpreter's own path. The builder copies
exactly these files (plus the shared libraries they link) into the guest, so the agent runs there.

Usage: python3 -B -s agent-files.py
"""
import fcntl  # noqa: F401
import os
import socket  # noqa: F401
import struct  # noqa: F401
import sys
import termios  # noqa: F401
import time  # noqa: F401
import tty  # noqa: F401

files = sorted(
    {
        m.__file__
        for m in list(sys.modules.values())
        if isinstance(getattr(m, "__file__", None), str) and os.path.isabs(m.__file__) and os.path.exists(m.__file__)
    }
)
import json  # noqa: E402  (after the listing: the agent does not import json)

print(json.dumps({"files": files, "executable": os.path.realpath(sys.executable)}), flush=True)
`;

/** reseed-hook.cjs */
export const RESEED_HOOK_CJS = `"use strict";
// Preloaded into the harness's node in a vm guest (node -r /hh/reseed-hook.cjs PROGRAM). Node keeps its
// random generators' state in process memory — OpenSSL's DRBG behind crypto.randomBytes, the cache of
// pre-drawn bytes behind randomUUID and randomInt, V8's Math.random state — so every copy of a whole-VM
// snapshot would draw the same values. This hook serves those functions from the kernel instead:
//
//   every byte they return is read from /dev/urandom into a 4 KiB pool, handed out once and then
//   zeroed; on "reseed" (sent by the guest agent on this process's socket in ${RESEED_DIR} once the
//   host reseeded the kernel of a restored or forked copy, and before that copy serves) the unserved
//   rest of the pool is dropped.
//
// So every value is kernel output that this copy never served before, drawn after the copy's kernel
// was reseeded: two copies of one snapshot never serve the same bytes, and the pool keeps a draw to a
// copy from memory most of the time. Where a function validates its arguments the original runs first
// (its errors are Node's own) and its output is overwritten. OpenSSL's internal uses (TLS, key
// generation, crypto.subtle) are out of JavaScript's reach and are not covered.
const crypto = require("node:crypto");
const fs = require("node:fs");
const net = require("node:net");
const { syncBuiltinESMExports } = require("node:module");

const POOL_BYTES = 4096;
const device = fs.openSync("/dev/urandom", "r");
const pool = Buffer.alloc(POOL_BYTES);
let used = POOL_BYTES;

function readKernel(view, offset, length) {
  let done = 0;
  while (done < length) done += fs.readSync(device, view, offset + done, length - done, null);
}

/** Fills view (a Uint8Array) with kernel bytes never served before. */
function fill(view) {
  const n = view.length;
  if (n >= POOL_BYTES) return readKernel(view, 0, n);
  for (let off = 0; off < n; ) {
    if (used === POOL_BYTES) {
      readKernel(pool, 0, POOL_BYTES);
      used = 0;
    }
    const take = Math.min(n - off, POOL_BYTES - used);
    pool.copy(view, off, used, used + take);
    pool.fill(0, used, used + take);
    used += take;
    off += take;
  }
}

/** The bytes of buf (any ArrayBuffer or view) from element offset, size elements (as randomFill counts). */
function range(buf, offset, size) {
  const bytes = ArrayBuffer.isView(buf) ? new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength) : new Uint8Array(buf);
  const element = buf.BYTES_PER_ELEMENT || 1;
  const start = (offset ?? 0) * element;
  return bytes.subarray(start, size === undefined ? bytes.length : start + size * element);
}

/** The offset of n (at most 64) contiguous pool bytes never served before; the caller wipes them once read. */
function take(n) {
  if (POOL_BYTES - used < n) {
    pool.fill(0, used);
    readKernel(pool, 0, POOL_BYTES);
    used = 0;
  }
  used += n;
  return used - n;
}

function wipe(at, n) {
  for (let i = at; i < at + n; i++) pool[i] = 0;
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

function uuid() {
  const at = take(16);
  let s = "";
  for (let i = 0; i < 16; i++) {
    const b = i === 6 ? (pool[at + i] & 0x0f) | 0x40 : i === 8 ? (pool[at + i] & 0x3f) | 0x80 : pool[at + i];
    s += (i === 4 || i === 6 || i === 8 || i === 10 ? "-" : "") + HEX[b];
  }
  wipe(at, 16);
  return s;
}

/** A uniform integer in [0, bound) for bound <= 2**48, by rejection (as crypto.randomInt draws). */
function below(bound) {
  const MAX = 2 ** 48;
  const limit = MAX - (MAX % bound);
  for (;;) {
    const at = take(6);
    const x = pool.readUIntBE(at, 6);
    wipe(at, 6);
    if (x < limit) return x % bound;
  }
}

const original = {
  randomBytes: crypto.randomBytes,
  randomFillSync: crypto.randomFillSync,
  randomFill: crypto.randomFill,
  randomInt: crypto.randomInt,
  randomUUID: crypto.randomUUID,
};

crypto.randomBytes = function randomBytes(size, callback) {
  if (typeof callback !== "function") return fillAll(original.randomBytes(size, callback));
  return original.randomBytes(size, (err, buf) => callback(err, err ? buf : fillAll(buf)));
};

function fillAll(buf) {
  fill(range(buf));
  return buf;
}

crypto.randomFillSync = function randomFillSync(buf, offset, size) {
  original.randomFillSync(buf, offset, size);
  fill(range(buf, offset, size));
  return buf;
};

crypto.randomFill = function randomFill(buf, ...rest) {
  const callback = rest.at(-1);
  if (typeof callback !== "function") return original.randomFill(buf, ...rest);
  const [offset, size] = rest.slice(0, -1);
  return original.randomFill(buf, ...rest.slice(0, -1), (err, out) => {
    if (!err) fill(range(out, offset, size));
    callback(err, out);
  });
};

crypto.randomInt = function randomInt(min, max, callback) {
  const onlyMax = max === undefined || typeof max === "function";
  const [lo, hi, cb] = onlyMax ? [0, min, max] : [min, max, callback];
  if (cb !== undefined && typeof cb !== "function") return original.randomInt(lo, hi, cb);
  original.randomInt(lo, hi); // Node's range checks and errors
  const n = lo + below(hi - lo);
  if (cb === undefined) return n;
  process.nextTick(cb, null, n);
};

crypto.randomUUID = function randomUUID(options) {
  if (options !== undefined) original.randomUUID(options); // Node's option checks and errors
  return uuid();
};

const webCrypto = Object.getPrototypeOf(crypto.webcrypto);
const webGetRandomValues = webCrypto.getRandomValues;
const webRandomUUID = webCrypto.randomUUID;
webCrypto.getRandomValues = function getRandomValues(array) {
  webGetRandomValues.call(this, array); // the receiver and argument checks, the 65536-byte quota
  fill(range(array));
  return array;
};
webCrypto.randomUUID = function randomUUID() {
  webRandomUUID.call(this);
  return uuid();
};

Math.random = function random() {
  const at = take(8);
  const x = (pool.readUInt32BE(at) >>> 11) * 2 ** 32 + pool.readUInt32BE(at + 4);
  wipe(at, 8);
  return x / 2 ** 53;
};

syncBuiltinESMExports();

fs.mkdirSync("${RESEED_DIR}", { recursive: true });
const socketPath = \`${RESEED_DIR}/\${process.pid}.sock\`;
fs.rmSync(socketPath, { force: true });
const server = net.createServer((conn) => {
  let text = "";
  conn.setEncoding("utf8");
  conn.on("error", () => undefined);
  conn.on("data", (chunk) => {
    text += chunk;
    if (!text.includes("\\n")) return;
    if (text.trim() !== "reseed") return conn.end("error unknown command\\n");
    pool.fill(0);
    used = POOL_BYTES;
    conn.end("reseeded\\n");
  });
});
server.listen(socketPath);
server.unref();
`;

/** reseed_hook.py */
export const RESEED_HOOK_PY = `"""Runs the harness program in a vm guest (python3 -B -s /hh/reseed_hook.py PROGRAM ARGS...) as
python3 PROGRAM ARGS... would, after starting the process's reseed listener: a daemon thread on the
unix socket ${RESEED_DIR}/PID.sock. The guest agent sends it "reseed" once the host reseeded the
kernel of a restored or forked copy, before that copy serves; it reseeds the random module's shared
generator from the (now reseeded) kernel and answers "reseeded".

Without it every copy of a whole-VM snapshot continues the random module's Mersenne Twister from the
same state. os.urandom, secrets, uuid.uuid4 and random.SystemRandom read the kernel on every call and
need nothing here; Random instances the program made itself are its own to reseed.
"""
import os
import random
import runpy
import socket
import sys
import threading

RESEED_DIR = "${RESEED_DIR}"


def answer(line):
    if line.strip() != b"reseed":
        return b"error unknown command\\n"
    random.seed()  # 2496 bytes from os.urandom: the kernel's reseeded pool
    return b"reseeded\\n"


def serve(server):
    while True:
        conn, _ = server.accept()
        with conn, conn.makefile("rb") as reader:
            conn.sendall(answer(reader.readline(64)))


def main():
    os.makedirs(RESEED_DIR, exist_ok=True)
    path = os.path.join(RESEED_DIR, f"{os.getpid()}.sock")
    if os.path.exists(path):
        os.unlink(path)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(4)
    threading.Thread(target=serve, args=(server,), daemon=True, name="harnesshost-reseed").start()
    program = sys.argv[1]
    sys.argv = sys.argv[1:]
    sys.path[0] = os.path.dirname(os.path.abspath(program))
    runpy.run_path(program, run_name="__main__")


main()
`;

/** Every guest script by file name. */
export const GUEST_FILES: Readonly<Record<string, string>> = {
  "agent-files.py": AGENT_FILES_PY,
  "agent.py": AGENT_PY,
  "compile.py": COMPILE_PY,
  "init.sh": INIT_SH,
  "probe.py": PROBE_PY,
  "reseed-hook.cjs": RESEED_HOOK_CJS,
  "reseed_hook.py": RESEED_HOOK_PY,
};
