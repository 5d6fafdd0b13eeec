// ListSessions pages bounded by bytes as well as by count. Invariant: the sessions a page returns
// encode to at most `listPageBytes` (always at least one session, which metadataBytes keeps small),
// and when a page stops early its next_page_token continues right after its last session, so paging
// through a project neither skips nor repeats a session whatever the sessions' sizes.
import { toBinary } from "@bufbuild/protobuf";
import { type Session, SessionSchema } from "../gen/agentsessions/v1/session_pb.js";
import { encodePageToken } from "../journal/paging.js";
import type { SessionInfo } from "../journal/types.js";

export interface BoundedPage {
  readonly sessions: Session[];
  readonly nextPageToken: string;
}

/**
 * The longest prefix of `views` (the served views of `infos`, in the same order) that fits in
 * `budget` encoded bytes, and the token that continues after it (`nextPageToken` when all fit).
 */
export function withinBytes(
  infos: readonly SessionInfo[],
  views: readonly Session[],
  nextPageToken: string,
  budget: number,
): BoundedPage {
  let used = 0;
  for (let i = 0; i < views.length; i++) {
    used += toBinary(SessionSchema, views[i]!).length;
    if (used > budget && i > 0) {
      const last = infos[i - 1]!;
      return {
        sessions: views.slice(0, i),
        nextPageToken: encodePageToken({ createdAtMs: last.createdAtMs, uid: last.uid }),
      };
    }
  }
  return { sessions: [...views], nextPageToken };
}
