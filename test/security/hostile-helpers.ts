// Shared checks of the hostile-peer suites: the host answers health within a bound and every
// journal still verifies.
import * as grpc from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import { protoPath as healthProtoPath } from "grpc-health-check";
import { expect } from "vitest";
import type { Journal } from "../../src/journal/types.js";

/** Health answers SERVING within `withinMs` (a deadline on the call, not a timing assertion). */
export async function healthServing(addr: string, withinMs = 1000): Promise<void> {
  expect(await healthStatus(addr, withinMs)).toBe("SERVING");
}

type Check = (
  req: object,
  opts: grpc.CallOptions,
  cb: (err: grpc.ServiceError | null, res?: Record<string, unknown>) => void,
) => void;
type HealthCtor = new (addr: string, creds: grpc.ChannelCredentials) => grpc.Client & { check: Check };

const Health = (
  grpc.loadPackageDefinition(loadSync(healthProtoPath, { keepCase: true, enums: String })) as unknown as {
    grpc: { health: { v1: { Health: HealthCtor } } };
  }
).grpc.health.v1.Health;

/** The health status of `service` ("" = the server), failing when no answer comes within `withinMs`. */
export function healthStatus(addr: string, withinMs = 1000, service = ""): Promise<string> {
  return new Promise((resolve, reject) => {
    const client = new Health(addr, grpc.credentials.createInsecure());
    client.check({ service }, { deadline: Date.now() + withinMs }, (err, res) => {
      client.close();
      if (err) reject(err);
      else resolve(String(res?.["status"] ?? ""));
    });
  });
}

export async function allJournalsVerify(journal: Journal): Promise<void> {
  for (const uid of await journal.allSessionUids()) {
    const result = await journal.verify(uid);
    expect(result, uid).toMatchObject({ ok: true });
  }
}
