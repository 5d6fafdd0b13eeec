// The adapters' typed error (docs/integrations.md). Invariant: what a framework hands the adapter that
// the journal cannot hold (a provider-defined tool, a file part, a tool input that is not an object)
// fails the turn as INVALID_ARGUMENT naming the part, before anything about it is journaled.
import { ErrorCode, HostError } from "../../errors/index.js";

export class AdapterError extends HostError {
  constructor(message: string) {
    super(ErrorCode.InvalidArgument, message);
  }
}
