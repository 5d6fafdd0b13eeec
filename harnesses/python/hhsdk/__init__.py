"""harnesshost's Python helpers for harness nodes written with Debian's grpcio + protobuf.

``hhsdk.proto.Protos`` builds the agentsessions.v1 message classes at run time from a
FileDescriptorSet; ``DESCRIPTORS`` is the one shipped beside this package (``buf build`` of proto/,
kept equal to it by a test), so a node needs no protoc plugin and no generated code.
"""
import os

DESCRIPTORS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "agentsessions.binpb")
