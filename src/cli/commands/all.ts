// Side-effect imports of command modules that register themselves with addCommand.
import "../grpc-api.js";
import "./serve.js";
import "./node.js";
import "./gc.js";
import "./harness.js";
import "./conformance.js";
