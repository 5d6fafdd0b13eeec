// Canonical forms and content hashes: RFC 8785 over proto3-JSON, as the reference computes them.
export { jcs, NotCanonicalizableError } from "./jcs.js";
export { protoJcs, recordJcs } from "./proto-jcs.js";
export {
  protoJson,
  canonicalProto,
  canonicalRecord,
  canonicalRecordViaTree,
  hashRecord,
  hashRecordJson,
  protoDigest,
  sha256Hex,
} from "./hash.js";
export { modelInputHash } from "./model-input.js";
export { goModelInputHash } from "./go-model-input.js";
export {
  GO_WRITTEN_THROUGH_ANNOTATION,
  inputHashFormOf,
  modelInputHashIn,
  type InputHashForm,
} from "./input-hash-form.js";
