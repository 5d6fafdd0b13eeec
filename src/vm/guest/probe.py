"""Image-build probe: runs a harness program on the build machine until it listens on HARNESS_PORT,
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
