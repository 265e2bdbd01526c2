/**
 * Decision B9 in ingestion: module-call depth ≤ 8, the stored summary
 * ≤ 10,000 module nodes and ≤ 1 MiB, HCL nesting ≤ 100 (20,000 deep is refused, no stack
 * overflow), at most 1,000 tar metadata headers. Over a bound the version ends
 * `reg_ingress_failed` through the real Queue consumer, with a message naming the bound:
 * the consumer acknowledges it at once (never retried, never "internal error").
 */
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { ingestModuleVersionMessage } from "../../../../src/nocode/messages/provision";
import { handleQueue, PROVISION_QUEUE_NAME } from "../../../../src/queue";
import { buildTarball, type TarEntrySpec } from "../../../support/tarball";
import { createModule, createVersion, type RegistryOrg, readVersion, registryOrg, upload } from "./registry-fixtures";

let ctx: RegistryOrg;
beforeAll(async () => {
  ctx = await registryOrg();
});

const PROVIDERS = 'terraform {\n  required_providers {\n    null = { source = "hashicorp/null" }\n  }\n}\n';

/** Upload `tarball` as a new version and wait for the real consumer's verdict. */
async function publish(tarball: Uint8Array): Promise<{ versionId: string; status: string; error: string | null }> {
  const mod = await createModule(ctx.org, ctx.tokens.manager);
  const v = await createVersion(ctx.org, mod.name, "1.0.0", ctx.tokens.manager);
  expect((await upload(v.upload, tarball)).status).toBe(200);
  const attributes = await vi.waitFor(
    async () => {
      const read = await readVersion(ctx.org, mod.name, "1.0.0", ctx.tokens.member);
      const a = read.json.data.attributes;
      if (a.status !== "ok" && a.status !== "reg_ingress_failed") throw new Error(`still ${a.status}`);
      return a as { status: string; error: string | null };
    },
    { timeout: 25_000, interval: 50 },
  );
  return { versionId: v.id, status: attributes.status, error: attributes.error };
}

/**
 * A lattice of local modules: the root and each `m<i>` call `m<i+1>` `fanout` times, down to
 * `m<depth>`, whose body is `leaf`. Tiny as source; expanded, it has fanout^depth leaves.
 */
function lattice(depth: number, fanout: number, leaf = 'resource "null_resource" "leaf" {}\n'): Record<string, string> {
  const calls = (target: string) =>
    Array.from({ length: fanout }, (_, i) => `module "c${i}" {\n  source = "${target}"\n}\n`).join("");
  const files: Record<string, string> = {
    "main.tf": `${PROVIDERS}resource "null_resource" "root" {}\n${calls("./m1")}`,
  };
  for (let level = 1; level <= depth; level++) {
    files[`m${level}/main.tf`] = level === depth ? leaf : calls(`../m${level + 1}`);
  }
  return files;
}

describe("ingestion bounds (B9)", () => {
  it("module calls that expand to more than 10,000 summaries → reg_ingress_failed naming the bound", async () => {
    // 4 calls per level, 8 levels: 87,381 module summaries from 9 tiny files.
    const result = await publish(await buildTarball(lattice(8, 4)));
    expect(result.status).toBe("reg_ingress_failed");
    expect(result.error).toMatch(/more than 10000 module summaries/);
  });

  it("a stored summary over 1 MiB → reg_ingress_failed naming the bound", async () => {
    // 2 calls per level, 6 levels: 127 summaries, the leaf ~40 KB each.
    const leaf = Array.from(
      { length: 200 },
      (_, i) => `resource "null_resource" "r${i}" {\n  triggers = { value = "${"x".repeat(100)}" }\n}\n`,
    ).join("");
    const result = await publish(await buildTarball(lattice(6, 2, leaf)));
    expect(result.status).toBe("reg_ingress_failed");
    expect(result.error).toMatch(/summary is larger than 1 MiB/);
  });

  it("a lattice within the bounds is still ok (8 levels deep, 2 calls each)", async () => {
    const result = await publish(await buildTarball(lattice(8, 2)));
    expect(result).toMatchObject({ status: "ok", error: null });
  });

  it("local module calls nested 9 deep → reg_ingress_failed naming the depth bound", async () => {
    const result = await publish(await buildTarball(lattice(9, 1)));
    expect(result.status).toBe("reg_ingress_failed");
    expect(result.error).toMatch(/nested more than 8 deep/);
  });

  it.each([
    ["a tuple", (n: number) => `locals {\n  deep = ${"[".repeat(n)}1${"]".repeat(n)}\n}\n`],
    ["an object", (n: number) => `locals {\n  deep = ${"{ a = ".repeat(n)}1${" }".repeat(n)}\n}\n`],
    ["parentheses", (n: number) => `locals {\n  deep = ${"(".repeat(n)}1${")".repeat(n)}\n}\n`],
    ["blocks", (n: number) => `resource "null_resource" "x" {\n${"dynamic {\n".repeat(n)}${"}\n".repeat(n)}}\n`],
  ])("HCL nested 20,000 deep (%s) → reg_ingress_failed naming the nesting bound", async (_what, make) => {
    const result = await publish(
      await buildTarball({ "main.tf": `${PROVIDERS}resource "null_resource" "r" {}\n`, "deep.tf": make(20_000) }),
    );
    expect(result.status).toBe("reg_ingress_failed");
    expect(result.error).toMatch(/deep\.tf at line \d+: blocks and expressions nested more than 100 levels deep/);
  });

  it("HCL nested 100 deep is accepted, 101 is not", async () => {
    const n = 99; // inside `locals { … }`, whose `{` is the first level
    const result = await publish(
      await buildTarball({
        "main.tf": `${PROVIDERS}resource "null_resource" "r" {}\nlocals {\n  deep = ${"[".repeat(n)}1${"]".repeat(n)}\n}\n`,
      }),
    );
    expect(result).toMatchObject({ status: "ok", error: null });
    const over = await publish(
      await buildTarball({
        "main.tf": `${PROVIDERS}resource "null_resource" "r" {}\nlocals {\n  deep = ${"[".repeat(n + 1)}1${"]".repeat(n + 1)}\n}\n`,
      }),
    );
    expect(over.status).toBe("reg_ingress_failed");
    expect(over.error).toMatch(/nested more than 100 levels deep/);
  });

  it("a 2,000-term sum (deep without brackets) is refused by the tree-depth backstop, not a stack overflow", async () => {
    const sum = Array.from({ length: 2000 }, () => "1").join(" + ");
    const result = await publish(
      await buildTarball({ "main.tf": `${PROVIDERS}resource "null_resource" "r" {}\nlocals {\n  sum = ${sum}\n}\n` }),
    );
    expect(result.status).toBe("reg_ingress_failed");
    expect(result.error).toMatch(/main\.tf at line \d+: blocks and expressions nested more than 100 levels deep/);
  });

  it("more than 1,000 tar metadata headers → reg_ingress_failed naming the bound", async () => {
    const metadata: TarEntrySpec[] = Array.from({ length: 1001 }, (_, i) => ({
      path: `pax-global-${i}`,
      typeflag: "g",
      content: "",
    }));
    const result = await publish(
      await buildTarball([...metadata, { path: "main.tf", content: `${PROVIDERS}resource "null_resource" "r" {}\n` }]),
    );
    expect(result.status).toBe("reg_ingress_failed");
    expect(result.error).toMatch(/more than 1000 metadata headers/);
  });

  it("the consumer acknowledges an over-bound version at once: no retry, not an internal error", async () => {
    const mod = await createModule(ctx.org, ctx.tokens.manager);
    const v = await createVersion(ctx.org, mod.name, "1.0.0", ctx.tokens.manager);
    // Store the tarball as an upload would, without queueing it, then deliver one message.
    await env.MODULES.put(`registry-modules/${mod.id}/${v.id}.tar.gz`, await buildTarball(lattice(8, 4)));
    await env.DB.prepare("UPDATE registry_module_versions SET status = 'reg_ingressing', tarball_key = ? WHERE id = ?")
      .bind(`registry-modules/${mod.id}/${v.id}.tar.gz`, v.id)
      .run();
    await env.DB.prepare("UPDATE registry_upload_links SET used_at = 1 WHERE version_id = ?").bind(v.id).run();
    const batch = createMessageBatch(PROVISION_QUEUE_NAME, [
      { id: "bound-1", timestamp: new Date(), attempts: 1, body: ingestModuleVersionMessage(v.id) },
    ]);
    const ectx = createExecutionContext();
    await handleQueue(batch, env, ectx);
    const result = await getQueueResult(batch, ectx);
    expect(result.explicitAcks).toEqual(["bound-1"]);
    expect(result.retryMessages).toEqual([]);
    const row = await env.DB.prepare("SELECT status, error FROM registry_module_versions WHERE id = ?")
      .bind(v.id)
      .first<{ status: string; error: string }>();
    expect(row?.status).toBe("reg_ingress_failed");
    expect(row?.error).not.toMatch(/internal error/);
  });
});
