"""Message classes and gRPC method paths of agentsessions.v1, built at run time from a
FileDescriptorSet (``buf build -o FILE``), so this side never shares generated code with grpc-js.

Only Debian's python3-grpcio and python3-protobuf are needed; no protoc plugin.
"""
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

PACKAGE = "agentsessions.v1"


class Protos:
    """Looks message classes up by short name (``Event``) in one descriptor pool."""

    def __init__(self, descriptor_set_path):
        fds = descriptor_pb2.FileDescriptorSet()
        with open(descriptor_set_path, "rb") as f:
            fds.ParseFromString(f.read())
        self.pool = descriptor_pool.DescriptorPool()
        for file_proto in fds.file:
            self.pool.Add(file_proto)
        self._factory = message_factory.MessageFactory(self.pool)
        self._classes = {}

    def message(self, name):
        full = name if "." in name else f"{PACKAGE}.{name}"
        cls = self._classes.get(full)
        if cls is None:
            desc = self.pool.FindMessageTypeByName(full)
            get_class = getattr(message_factory, "GetMessageClass", None)
            cls = get_class(desc) if get_class is not None else self._factory.GetPrototype(desc)
            self._classes[full] = cls
        return cls

    def enum_value(self, enum_name, value_name):
        return self.pool.FindEnumTypeByName(f"{PACKAGE}.{enum_name}").values_by_name[value_name].number

    def enum_name(self, enum_name, number):
        return self.pool.FindEnumTypeByName(f"{PACKAGE}.{enum_name}").values_by_number[number].name

    def method(self, service, method):
        """The gRPC path of a method plus its request and response classes, checked against the pool."""
        desc = self.pool.FindServiceByName(f"{PACKAGE}.{service}").FindMethodByName(method)
        if desc is None:
            raise KeyError(f"{service}.{method} is not in the descriptor set")
        return (
            f"/{PACKAGE}.{service}/{method}",
            self.message(desc.input_type.full_name),
            self.message(desc.output_type.full_name),
        )


def unary_unary(channel, protos, service, method):
    path, req, resp = protos.method(service, method)
    return channel.unary_unary(path, request_serializer=req.SerializeToString, response_deserializer=resp.FromString), req


def unary_stream(channel, protos, service, method):
    path, req, resp = protos.method(service, method)
    return channel.unary_stream(path, request_serializer=req.SerializeToString, response_deserializer=resp.FromString), req
