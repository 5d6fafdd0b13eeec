"""Image-build step: compiles every Python source of a staged guest tree to bytecode, so the guest
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
