// The guest-side scripts of a vm image, kept as TypeScript strings so they ship inside the compiled
// package (dist/) like any module. Invariant: the builder writes exactly these bytes — into the image
// (init, agent.py) or into a private temporary directory on the build machine (probe.py, compile.py,
// agent-files.py) — and hashes them into the build cache key, so changing a script rebuilds every image.
// Edit the Python/shell text here; each constant is one file.

/** agent.py */
export const AGENT_PY = `"""The guest control agent: the one process in the guest besides the harness node. It reads commands
from the second serial port (/dev/ttyS1, a unix socket on the host) and answers each on one line.

  reseed UNIX_NS HEX  ->  reseeded UNIX_NS
      Sets CLOCK_REALTIME to UNIX_NS, adds the HEX bytes to the kernel entropy pool (credited) and
      forces the kernel CRNG to reseed, so os.urandom/getrandom in every restored or forked copy of
      a snapshot diverge at once and the wall clock is the host's again. The monotonic clock is not
      touched: it continues from the snapshot.

  probe  ->  probe UNIX_NS HEX
      The guest's wall clock and 16 bytes from os.urandom (tests check that copies diverge).

Stdlib only; runs as root (pid 1's child) so it may set the clock and reseed.
"""
import fcntl
import os
import struct
import termios
import time
import tty

RNDADDENTROPY = 0x40085203
RNDRESEEDCRNG = 0x5207


def reseed(unix_ns, seed):
    time.clock_settime_ns(time.CLOCK_REALTIME, unix_ns)
    fd = os.open("/dev/urandom", os.O_WRONLY)
    try:
        fcntl.ioctl(fd, RNDADDENTROPY, struct.pack("ii", len(seed) * 8, len(seed)) + seed)
        fcntl.ioctl(fd, RNDRESEEDCRNG)
    finally:
        os.close(fd)


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
                    answer = f"reseeded {words[1]}"
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

/** Every guest script by file name. */
export const GUEST_FILES: Readonly<Record<string, string>> = {
  "agent-files.py": AGENT_FILES_PY,
  "agent.py": AGENT_PY,
  "compile.py": COMPILE_PY,
  "init.sh": INIT_SH,
  "probe.py": PROBE_PY,
};
