// Side-effect imports of command modules that register themselves with addCommand.
import "./node.js";
