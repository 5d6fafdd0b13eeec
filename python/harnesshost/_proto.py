"""The agentsessions.v1 message classes, built at import from the FileDescriptorSet shipped in this
package (``agentsessions.binpb``, ``buf build`` of the repository's proto/, kept equal to it by
test/python/package.test.ts). Invariant: one descriptor pool per process, so every message class the
SDK hands out comes from it; no protoc plugin and no generated code are needed, only Debian's
python3-protobuf.
"""

from __future__ import annotations

import os
from typing import Any, Dict

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

PACKAGE = "agentsessions.v1"
DESCRIPTOR_SET = os.path.join(os.path.dirname(os.path.abspath(__file__)), "agentsessions.binpb")


def _load_pool(path: str) -> descriptor_pool.DescriptorPool:
    files = descriptor_pb2.FileDescriptorSet()
    with open(path, "rb") as f:
        files.ParseFromString(f.read())
    pool = descriptor_pool.DescriptorPool()
    for file_proto in files.file:
        pool.Add(file_proto)
    return pool


POOL = _load_pool(DESCRIPTOR_SET)
_classes: Dict[str, Any] = {}


def message_class(name: str) -> Any:
    """The class of a message by short name (``Event``) or full name (``harnesshost.v1.NodeInfoRequest``)."""
    full = name if "." in name else f"{PACKAGE}.{name}"
    cls = _classes.get(full)
    if cls is None:
        desc = POOL.FindMessageTypeByName(full)
        get_class = getattr(message_factory, "GetMessageClass", None)
        cls = get_class(desc) if get_class is not None else message_factory.MessageFactory(POOL).GetPrototype(desc)
        _classes[full] = cls
    return cls


def enum_number(enum: str, value: str) -> int:
    """The number of an enum value, e.g. ``enum_number("EventKind", "EVENT_END")``."""
    number: int = POOL.FindEnumTypeByName(f"{PACKAGE}.{enum}").values_by_name[value].number
    return number


def enum_name(enum: str, number: int) -> str:
    """The name of an enum value by number; ``"?<n>"`` for a number the descriptor does not know."""
    values = POOL.FindEnumTypeByName(f"{PACKAGE}.{enum}").values_by_number
    return str(values[number].name) if number in values else f"?{number}"


def method(service: str, name: str) -> "tuple[str, Any, Any]":
    """A method's gRPC path with its request and response classes (``service`` may be a full name)."""
    full = service if "." in service else f"{PACKAGE}.{service}"
    desc = POOL.FindServiceByName(full).FindMethodByName(name)
    if desc is None:
        raise KeyError(f"{full}.{name} is not in the descriptor set")
    return f"/{full}/{name}", message_class(desc.input_type.full_name), message_class(desc.output_type.full_name)
