// The file that makes a directory a vm harness image (image-manifest.ts reads and checks it). Invariant:
// this module holds the name only, so what needs to recognise an image (host/harness-spec.ts, on every
// serve start) loads none of the manifest's schemas; they load with the vm runtime.
export const MANIFEST = "manifest.json";
