/**
 * The provisioning queue consumer and its dead-letter consumer (decisions N4, N11), driven
 * through the real `queue()` entry point with `createMessageBatch`/`getQueueResult`.
 * Failures are injected through the consumer's `ingest` dependency (N11), never by mocking
 * bindings.
 */
import { env } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { createDb } from "../../../../src/db/client";
import { registryModules, registryModuleVersions } from "../../../../src/db/schema/nocode";
import type { ModuleSummary } from "../../../../src/lib/terraform/types";
import { newId } from "../../../../src/nocode/ids";
import { ingestModuleVersionMessage, parseProvisionMessage } from "../../../../src/nocode/messages/provision";
import { retryDelaySeconds } from "../../../../src/nocode/queue/consumer";
import type { IngestFn } from "../../../../src/nocode/registry/ingestion";
import { INGESTION_GAVE_UP } from "../../../../src/nocode/registry/ingestion";
import { createQueueHandler, handleQueue, PROVISION_DLQ_NAME, PROVISION_QUEUE_NAME } from "../../../../src/queue";
import { deliverBatch } from "../../../helpers/queue";

const db = createDb(env.DB);

/** A small but complete summary, as the ingestion building block would return it. */
function fakeSummary(): ModuleSummary {
  return {
    path: "",
    files: ["main.tf"],
    requiredVersions: [],
    variables: [
      {
        name: "size",
        type: "number",
        default: { literal: true, value: 3 },
        required: false,
        description: null,
        sensitive: false,
        nullable: true,
        validations: [],
        file: "main.tf",
        line: 1,
      },
    ],
    outputs: [],
    requiredProviders: [],
    providerConfigs: [{ name: "null", alias: null, file: "main.tf", line: 5 }],
    resources: [
      {
        address: "null_resource.x",
        mode: "managed",
        type: "null_resource",
        name: "x",
        hasCount: false,
        hasForEach: false,
        references: { variables: ["size"], locals: [] },
        normalizedSource: 'resource "null_resource" "x" {\n}',
        file: "main.tf",
        line: 7,
      },
    ],
    dataSources: [],
    moduleCalls: [],
    locals: {},
    errors: [],
    warnings: [],
  };
}

type Status = (typeof registryModuleVersions.$inferSelect)["status"];

/** A module with one version in `status`, its tarball stored in R2 when uploaded. */
async function seedVersion(status: Status = "reg_ingressing") {
  const now = Date.now();
  const moduleId = newId("mod");
  const versionId = newId("modver");
  const tarballKey = status === "pending" ? null : `registry-modules/${moduleId}/${versionId}.tar.gz`;
  await db.insert(registryModules).values({
    id: moduleId,
    organization: `org-${crypto.randomUUID().slice(0, 8)}`,
    registryName: "private",
    namespace: "ns",
    name: "m",
    provider: "null",
    createdAt: now,
    updatedAt: now,
  });
  await db.insert(registryModuleVersions).values({
    id: versionId,
    moduleId,
    version: "1.0.0",
    status,
    tarballKey,
    createdAt: now,
    updatedAt: now,
  });
  if (tarballKey) await env.MODULES.put(tarballKey, new Uint8Array([0x1f, 0x8b, 1, 2, 3]));
  return { moduleId, versionId, tarballKey };
}

const versionRow = async (id: string) =>
  db.select().from(registryModuleVersions).where(eq(registryModuleVersions.id, id)).get();

/** Run one batch through a queue handler; returns the ack/retry result. */
function runBatch(queue: string, bodies: unknown[], ingest?: IngestFn, attempts = 1) {
  return deliverBatch(ingest ? createQueueHandler({ ingest }) : handleQueue, queue, bodies, attempts);
}

/** An ingest dependency that counts its calls. */
function counting(result: Awaited<ReturnType<IngestFn>>) {
  const calls: Uint8Array[] = [];
  const ingest: IngestFn = async (bytes) => {
    calls.push(bytes);
    return result;
  };
  return { ingest, calls };
}

describe("messages (N11: ids only, versioned, validated)", () => {
  it("builds and parses the ingest message", () => {
    const id = newId("modver");
    const message = ingestModuleVersionMessage(id);
    expect(message).toEqual({ v: 1, kind: "ingest-module-version", versionId: id });
    expect(parseProvisionMessage(JSON.parse(JSON.stringify(message)))).toEqual({ ok: true, message });
  });

  it.each([
    [null, "not an object"],
    [[1], "not an object"],
    [{ kind: "ingest-module-version", versionId: "modver-AAAAAAAAAAAAAAAA" }, "unsupported message version"],
    [{ v: 2, kind: "ingest-module-version", versionId: "modver-AAAAAAAAAAAAAAAA" }, "unsupported message version"],
    [{ v: 1, kind: "launch-rockets" }, "unknown message kind"],
    [{ v: 1, kind: "toString" }, "unknown message kind"],
    [{ v: 1, kind: "ingest-module-version" }, 'field "versionId"'],
    [{ v: 1, kind: "ingest-module-version", versionId: "mod-AAAAAAAAAAAAAAAA" }, 'field "versionId"'],
  ])("refuses %j", (body, error) => {
    const parsed = parseProvisionMessage(body);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.error).toContain(error);
  });

  it("backs off 2^attempts seconds, at most 300", () => {
    expect([1, 2, 3, 8, 9, 20].map(retryDelaySeconds)).toEqual([2, 4, 8, 256, 300, 300]);
  });
});

describe("ingest consumer", () => {
  it("records ok with the full ModuleSummary and keeps the tarball", async () => {
    const { versionId, tarballKey } = await seedVersion();
    const summary = fakeSummary();
    const { ingest, calls } = counting({ ok: true, summary });
    const { result, ids } = await runBatch(PROVISION_QUEUE_NAME, [ingestModuleVersionMessage(versionId)], ingest);
    expect(result.explicitAcks).toEqual(ids);
    expect(result.retryMessages).toEqual([]);
    expect(calls).toHaveLength(1);
    expect([...calls[0]!]).toEqual([0x1f, 0x8b, 1, 2, 3]);
    const row = await versionRow(versionId);
    expect(row?.status).toBe("ok");
    expect(row?.error).toBeNull();
    expect(JSON.parse(row!.summary!)).toEqual(summary);
    expect(row?.ingestedAt).toBeTypeOf("number");
    expect(await env.MODULES.head(tarballKey!)).not.toBeNull();
  });

  it("records reg_ingress_failed with the verdict and drops the refused tarball", async () => {
    const { versionId, moduleId, tarballKey } = await seedVersion();
    const { ingest } = counting({ ok: false, error: "the archive is not gzip-compressed" });
    const { result, ids } = await runBatch(PROVISION_QUEUE_NAME, [ingestModuleVersionMessage(versionId)], ingest);
    expect(result.explicitAcks).toEqual(ids);
    const row = await versionRow(versionId);
    expect(row).toMatchObject({
      status: "reg_ingress_failed",
      error: "the archive is not gzip-compressed",
      summary: null,
      tarballKey: null,
    });
    expect(await env.MODULES.head(tarballKey!)).toBeNull();
    // Nothing else changed: the module row is as seeded.
    const module = await db.select().from(registryModules).where(eq(registryModules.id, moduleId)).get();
    expect(module?.updatedAt).toBe(module?.createdAt);
  });

  it("is idempotent: a redelivered message acks without ingesting again (N11)", async () => {
    const { versionId } = await seedVersion();
    const { ingest, calls } = counting({ ok: true, summary: fakeSummary() });
    const message = ingestModuleVersionMessage(versionId);
    await runBatch(PROVISION_QUEUE_NAME, [message], ingest);
    const first = await versionRow(versionId);
    // Redelivery (at-least-once), also twice in one batch.
    const again = await runBatch(PROVISION_QUEUE_NAME, [message, message], ingest, 2);
    expect(again.result.explicitAcks).toEqual(again.ids);
    expect(calls).toHaveLength(1);
    expect(await versionRow(versionId)).toEqual(first);
  });

  it("a redelivery never overturns a failure either", async () => {
    const { versionId } = await seedVersion();
    await runBatch(
      PROVISION_QUEUE_NAME,
      [ingestModuleVersionMessage(versionId)],
      counting({ ok: false, error: "no .tf" }).ingest,
    );
    const okIngest = counting({ ok: true, summary: fakeSummary() });
    await runBatch(PROVISION_QUEUE_NAME, [ingestModuleVersionMessage(versionId)], okIngest.ingest);
    expect(okIngest.calls).toHaveLength(0);
    expect((await versionRow(versionId))?.status).toBe("reg_ingress_failed");
  });

  it("retries a transient failure with min(2^attempts, 300) seconds and leaves the version ingesting", async () => {
    const { versionId } = await seedVersion();
    const failing: IngestFn = async () => {
      throw new Error("injected transient fault");
    };
    for (const [attempts, delaySeconds] of [
      [1, 2],
      [3, 8],
      [9, 300],
    ] as const) {
      const { result, ids, delays } = await runBatch(
        PROVISION_QUEUE_NAME,
        [ingestModuleVersionMessage(versionId)],
        failing,
        attempts,
      );
      expect(result.explicitAcks).toEqual([]);
      expect(result.retryMessages).toEqual([{ msgId: ids[0] }]);
      expect(delays[ids[0]!]).toBe(delaySeconds);
    }
    expect((await versionRow(versionId))?.status).toBe("reg_ingressing");
    // Once the fault is gone, the next delivery succeeds.
    await runBatch(
      PROVISION_QUEUE_NAME,
      [ingestModuleVersionMessage(versionId)],
      counting({ ok: true, summary: fakeSummary() }).ingest,
    );
    expect((await versionRow(versionId))?.status).toBe("ok");
  });

  it("acks and logs poison messages, handling the good ones of the same batch", async () => {
    const { versionId } = await seedVersion();
    const { ingest, calls } = counting({ ok: true, summary: fakeSummary() });
    const bodies = [
      "not json at all",
      { v: 1, kind: "ingest-module-version", versionId: "'; DROP TABLE x; --" },
      { v: 99, kind: "ingest-module-version", versionId },
      ingestModuleVersionMessage(versionId),
    ];
    const { result, ids } = await runBatch(PROVISION_QUEUE_NAME, bodies, ingest);
    expect(result.explicitAcks.sort()).toEqual([...ids].sort());
    expect(result.retryMessages).toEqual([]);
    expect(calls).toHaveLength(1);
    expect((await versionRow(versionId))?.status).toBe("ok");
  });

  it("acks a message for a version that no longer exists (module deleted)", async () => {
    const { ingest, calls } = counting({ ok: true, summary: fakeSummary() });
    const { result, ids } = await runBatch(PROVISION_QUEUE_NAME, [ingestModuleVersionMessage(newId("modver"))], ingest);
    expect(result.explicitAcks).toEqual(ids);
    expect(calls).toHaveLength(0);
  });

  it("acks a message for a version not uploaded yet without touching it", async () => {
    const { versionId } = await seedVersion("pending");
    const { ingest, calls } = counting({ ok: true, summary: fakeSummary() });
    const { result, ids } = await runBatch(PROVISION_QUEUE_NAME, [ingestModuleVersionMessage(versionId)], ingest);
    expect(result.explicitAcks).toEqual(ids);
    expect(calls).toHaveLength(0);
    expect((await versionRow(versionId))?.status).toBe("pending");
  });

  it("fails the version when its stored tarball has vanished", async () => {
    const { versionId, tarballKey } = await seedVersion();
    await env.MODULES.delete(tarballKey!);
    const { ingest, calls } = counting({ ok: true, summary: fakeSummary() });
    await runBatch(PROVISION_QUEUE_NAME, [ingestModuleVersionMessage(versionId)], ingest);
    expect(calls).toHaveLength(0);
    const row = await versionRow(versionId);
    expect(row?.status).toBe("reg_ingress_failed");
    expect(row?.error).toContain("missing");
  });

  it("acks messages of an unknown queue", async () => {
    const { result, ids } = await runBatch("some-other-queue", [ingestModuleVersionMessage(newId("modver"))]);
    expect(result.explicitAcks).toEqual(ids);
  });
});

describe("dead-letter consumer", () => {
  it("marks a version that exhausted its retries reg_ingress_failed and drops its tarball", async () => {
    const { versionId, tarballKey } = await seedVersion();
    const { result, ids } = await runBatch(PROVISION_DLQ_NAME, [ingestModuleVersionMessage(versionId)]);
    expect(result.explicitAcks).toEqual(ids);
    const row = await versionRow(versionId);
    expect(row?.status).toBe("reg_ingress_failed");
    expect(row?.error).toBe(INGESTION_GAVE_UP);
    expect(await env.MODULES.head(tarballKey!)).toBeNull();
  });

  it("leaves a version that was decided meanwhile alone", async () => {
    const { versionId } = await seedVersion();
    await runBatch(
      PROVISION_QUEUE_NAME,
      [ingestModuleVersionMessage(versionId)],
      counting({ ok: true, summary: fakeSummary() }).ingest,
    );
    const before = await versionRow(versionId);
    const { result, ids } = await runBatch(PROVISION_DLQ_NAME, [ingestModuleVersionMessage(versionId)]);
    expect(result.explicitAcks).toEqual(ids);
    expect(await versionRow(versionId)).toEqual(before);
  });

  it("acks poison and unknown versions", async () => {
    const { result, ids } = await runBatch(PROVISION_DLQ_NAME, [{ v: 1 }, ingestModuleVersionMessage(newId("modver"))]);
    expect(result.explicitAcks.sort()).toEqual([...ids].sort());
  });
});
