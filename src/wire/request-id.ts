// The correlation-id header both ends of a call agree on. Invariant: client and server name it from
// this one constant (the server adopts or mints the id, src/server/request-id.ts; the client reads it
// back from a failed call's trailers, src/client/errors.ts).
export const REQUEST_ID_HEADER = "x-request-id";

/** A request id either end accepts as given (anything else is replaced by a minted one). */
export const VALID_REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;
