"""The Harness an author writes: a descriptor and ``run(start, sink)``. Invariant: ``run`` is either a
coroutine function (it gets an ``AsyncSink`` and runs on the node's event loop) or a plain function
(it gets a blocking ``Sink`` and runs in a worker thread); returning ends the turn COMPLETED, raising
ends it FAILED (CANCELED when the turn was cancelled), and a park must propagate (§4.6, §4.10).
"""

from __future__ import annotations

import inspect
from typing import Any, ClassVar, Optional

from .types import Descriptor, StartInfo


class Harness:
    """Subclass it, set ``descriptor`` and define ``run``::

        class Echo(Harness):
            descriptor = Descriptor(id="echo", version="1", models=["echo"])

            async def run(self, start: StartInfo, sink: AsyncSink) -> None:
                await sink.model("echo", start.inputs)

    ``describe()`` answers Describe; override it for a descriptor computed at run time (it must not
    depend on a session, §3). One object serves every session of its node: keep per-session state
    keyed by ``start.session_uid`` (on the vm runtime a guest serves exactly one session).
    """

    descriptor: ClassVar[Optional[Descriptor]] = None

    def describe(self) -> Descriptor:
        if self.descriptor is None:
            raise NotImplementedError(f"{type(self).__name__} sets no descriptor and does not override describe()")
        return self.descriptor

    def run(self, start: StartInfo, sink: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} does not define run(start, sink)")


def is_async(harness: Harness) -> bool:
    """Whether the harness's ``run`` is a coroutine function (else it runs in a worker thread)."""
    return inspect.iscoroutinefunction(harness.run)
