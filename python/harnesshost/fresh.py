"""Per-copy randomness (docs/runtimes.md, "Clock and randomness after a restore or fork").

Invariant: every value is read from the kernel (``os.urandom``) at the moment of the call — nothing is
pooled or seeded in the process — so two copies of one snapshot (fork children, restores of a vm
guest, whose kernel RNG the host reseeds before it serves) never draw the same values, on any runtime.
The ``random`` module's generator is state in RAM that such copies share: it repeats across copies
unless the runtime reseeds it (a vm image's reseed hook does, for the module-level generator only).
"""

import os
import uuid


def fresh_bytes(n: int) -> bytes:
    """``n`` bytes read from the kernel now."""
    return os.urandom(n)


def fresh_uuid() -> str:
    """A version-4 UUID from 16 fresh kernel bytes."""
    return str(uuid.UUID(bytes=os.urandom(16), version=4))


def fresh_random() -> float:
    """A float in [0, 1) from 53 fresh kernel bits (where ``random.random()`` would be used)."""
    return (int.from_bytes(os.urandom(8), "big") >> 11) / float(1 << 53)
