// The node's HTTP readiness probe (the reference's harnessnode serves it for its pods' ActorTemplate
// wakeup probe). Invariant: it is started only after the node's gRPC server is accepting, so a 200 from
// GET /readyz means the harness can be dialled; it is closed before the node stops serving.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { ErrorCode, HostError } from "../errors/index.js";

export interface ReadyProbe {
  /** `host:port` the probe listens on (port 0 resolved). */
  readonly address: string;
  close(): Promise<void>;
}

/** `host:port`, `[v6]:port` or the Go form `:port` (every interface). */
function hostPort(addr: string): { host: string; port: number } {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9.-]*)):(\d{1,5})$/.exec(addr.trim());
  const port = Number(m?.[3]);
  if (!m || port > 65_535)
    throw new HostError(
      ErrorCode.InvalidArgument,
      `ready address ${JSON.stringify(addr)}: expected host:port or :port`,
    );
  return { host: m[1] ?? (m[2] || "0.0.0.0"), port };
}

/** Serves `GET /readyz` → 200 `ok` (anything else 404) on `addr`. */
export async function serveReadyProbe(addr: string): Promise<ReadyProbe> {
  const { host, port } = hostPort(addr);
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "").split("?")[0];
    if ((req.method === "GET" || req.method === "HEAD") && path === "/readyz")
      res.writeHead(200, { "content-type": "text/plain" }).end("ok");
    else res.writeHead(404, { "content-type": "text/plain" }).end("not found");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const bound = server.address() as AddressInfo;
  return {
    address: bound.family === "IPv6" ? `[${bound.address}]:${bound.port}` : `${bound.address}:${bound.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
