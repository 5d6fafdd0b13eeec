// HTTP/2 flow-control windows for bulk transfers (snapshots, history uploads) between a host and its
// harness nodes. Invariant: both ends of an Actors connection let BULK_FLOW_WINDOW_BYTES be in flight —
// the client through grpc-js's `grpc-node.flow_control_window` channel option, the server by advertising
// the same window in its SETTINGS and widening each session's connection window — so a snapshot
// crosses the socket at copy speed instead of one 64 KiB window per round trip. Memory stays bounded:
// a reader that stops reading holds at most one window per stream.
import type { Http2Server, Http2Session } from "node:http2";
import type { ChannelOptions, Server } from "@grpc/grpc-js";

/**
 * The window (bytes) each direction of a bulk connection may have in flight. HTTP/2's default is 64 KiB,
 * which made a 100 MB snapshot over a unix socket wait on ~1,600 WINDOW_UPDATE round trips (25 MB/s on
 * a loaded 2-core machine); 16 MiB covers many 1 MiB snapshot chunks per round trip.
 */
export const BULK_FLOW_WINDOW_BYTES = 16 * 1024 * 1024;

/** Channel options of a client that moves snapshots (the receive window it advertises). */
export function bulkChannelOptions(): ChannelOptions {
  return { "grpc-node.flow_control_window": BULK_FLOW_WINDOW_BYTES };
}

/** The grpc-js server's HTTP/2 servers (a private field: absent in another grpc-js, then nothing is widened). */
function http2ServersOf(server: Server): Http2Server[] {
  const servers = (server as unknown as { http2Servers?: unknown }).http2Servers;
  return servers instanceof Map ? ([...servers.keys()] as Http2Server[]) : [];
}

function widen(session: Http2Session): void {
  try {
    session.setLocalWindowSize(BULK_FLOW_WINDOW_BYTES);
    session.settings({ initialWindowSize: BULK_FLOW_WINDOW_BYTES });
  } catch {
    // A session already closing: nothing to widen.
  }
}

/**
 * Makes every session the (bound) server accepts from now on advertise BULK_FLOW_WINDOW_BYTES for what
 * its clients send. Call after `listen`. Returns how many listeners were widened (0 when this grpc-js
 * keeps its HTTP/2 servers elsewhere: transfers then work at HTTP/2's default window).
 */
export function widenServerWindows(server: Server): number {
  const servers = http2ServersOf(server);
  for (const s of servers) s.on("session", widen);
  return servers.length;
}
