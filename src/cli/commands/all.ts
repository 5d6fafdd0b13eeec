// Side-effect imports of command modules that register themselves with addCommand.
import "../grpc-api.js";
import "./serve.js";
import "./harness.js";
