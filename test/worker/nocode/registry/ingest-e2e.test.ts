/**
 * Module ingestion end to end (N4, N9, N11, B5): create a version, PUT the tarball to
 * `links.upload`, let the real Queue consumer (maxBatchTimeout 0.05 s in tests) ingest
 * it, and poll the version as a client would. Also N3's latest-version helper.
 */
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { createDb } from "../../../../src/db/client";
import { ingestModuleVersionMessage } from "../../../../src/nocode/messages/provision";
import { latestOkVersion, versionSummary } from "../../../../src/nocode/registry/repo";
import { handleQueue, PROVISION_QUEUE_NAME } from "../../../../src/queue";
import { fixtureFiles } from "../../../fixtures/terraform";
import type { TfeAnswer } from "../../../helpers/nocode";
import { tfe } from "../../../helpers/nocode";
import { buildTar, buildTarball, type TarEntrySpec } from "../../../support/tarball";
import {
  createModule,
  createVersion,
  modulePath,
  type RegistryOrg,
  readVersion,
  registryOrg,
  storedObjects,
  upload,
} from "./registry-fixtures";

let ctx: RegistryOrg;
beforeAll(async () => {
  ctx = await registryOrg();
});

/** A small module whose ingested attributes are written out by hand below. */
const PET_MODULE: Record<string, string> = {
  "versions.tf": `terraform {
  required_version = ">= 1.5.0"
  required_providers {
    random = {
      source  = "hashicorp/random"
      version = "~> 3.6"
    }
  }
}

provider "null" {}
`,
  "variables.tf": `variable "prefix" {
  type        = string
  description = "Prefix of every name"
}

variable "length" {
  type     = number
  default  = 2
  nullable = false
}

variable "tags" {
  type    = map(string)
  default = { team = "platform" }
}

variable "seed" {
  type      = string
  default   = null
  sensitive = true
}
`,
  "main.tf": `locals {
  full_prefix = "\${var.prefix}-pets"
}

# A comment that changes nothing.
resource "random_pet" "name" {
  prefix = local.full_prefix
  length = var.length
}

resource "null_resource" "marker" {
  triggers = merge(var.tags, { seed = var.seed })
}

data "null_data_source" "unused" {}
`,
  "outputs.tf": `output "name" {
  description = "The generated name"
  value       = random_pet.name.id
}

output "seed" {
  value     = var.seed
  sensitive = true
}
`,
};

/** What ingestion must report for PET_MODULE, worked out by hand from the source. */
const PET_EXPECTED = {
  // Terraform reads files in lexical order: main, outputs, variables, versions.
  variables: [
    {
      name: "prefix",
      type: "string",
      default: null,
      description: "Prefix of every name",
      sensitive: false,
      nullable: true,
      required: true,
    },
    {
      name: "length",
      type: "number",
      default: 2,
      description: null,
      sensitive: false,
      nullable: false,
      required: false,
    },
    {
      name: "tags",
      type: "map(string)",
      default: { team: "platform" },
      description: null,
      sensitive: false,
      nullable: true,
      required: false,
    },
    {
      name: "seed",
      type: "string",
      default: null,
      description: null,
      sensitive: true,
      nullable: true,
      required: false,
    },
  ],
  outputs: [
    { name: "name", description: "The generated name", sensitive: false },
    { name: "seed", description: null, sensitive: true },
  ],
  providers: [
    { name: "random", source: "hashicorp/random", "version-constraint": "~> 3.6" },
    // A provider block without a required_providers entry.
    { name: "null", source: null, "version-constraint": null },
  ],
  // Managed resources only (data sources are not resources); references are direct mentions.
  resources: [
    {
      address: "random_pet.name",
      type: "random_pet",
      name: "name",
      references: { variables: ["length"], locals: ["full_prefix"] },
    },
    {
      address: "null_resource.marker",
      type: "null_resource",
      name: "marker",
      references: { variables: ["seed", "tags"], locals: [] },
    },
  ],
};

const SETTLED = new Set(["ok", "reg_ingress_failed"]);

/** Poll the version until ingestion has decided, as clients do (N9). */
async function pollVersion(org: string, name: string, version: string, provider = "aws"): Promise<TfeAnswer> {
  return vi.waitFor(
    async () => {
      const res = await readVersion(org, name, version, ctx.tokens.member, provider);
      if (!SETTLED.has(res.json?.data?.attributes?.status))
        throw new Error(`still ${res.json?.data?.attributes?.status}`);
      return res;
    },
    { timeout: 20_000, interval: 50 },
  );
}

/** Create a module version, upload `tarball`, and wait for the verdict. */
async function publish(tarball: Uint8Array, version = "1.0.0", module?: { id: string; name: string }) {
  const mod = module ?? (await createModule(ctx.org, ctx.tokens.manager));
  const v = await createVersion(ctx.org, mod.name, version, ctx.tokens.manager);
  const put = await upload(v.upload, tarball);
  expect(put.status).toBe(200);
  const read = await pollVersion(ctx.org, mod.name, version);
  return { mod, versionId: v.id, read, attributes: read.json.data.attributes };
}

describe("upload → queue → poll (N4, N9)", () => {
  it("ingests a module: status ok with variables, outputs, providers and resources as written", async () => {
    const { mod, versionId, attributes } = await publish(
      await buildTarball(PET_MODULE, { prefix: "./", directories: true }),
    );
    expect(attributes.status).toBe("ok");
    expect(attributes.error).toBeNull();
    expect(attributes.variables).toEqual(PET_EXPECTED.variables);
    expect(attributes.outputs).toEqual(PET_EXPECTED.outputs);
    expect(attributes.providers).toEqual(PET_EXPECTED.providers);
    expect(attributes.resources).toEqual(PET_EXPECTED.resources);

    // The module now reports the version ok and is set up.
    const module = await tfe("GET", modulePath(ctx.org, mod.name), { token: ctx.tokens.member });
    expect(module.json.data.attributes.status).toBe("setup_complete");
    expect(module.json.data.attributes["version-statuses"]).toEqual([{ version: "1.0.0", status: "ok", error: null }]);

    // The full ModuleSummary is stored on the version row for the planner (N7).
    const row = await env.DB.prepare("SELECT status, summary FROM registry_module_versions WHERE id = ?")
      .bind(versionId)
      .first<{ status: "ok"; summary: string }>();
    const summary = versionSummary(row!);
    expect(summary?.locals).toEqual({ full_prefix: { variables: ["prefix"], locals: [] } });
    expect(summary?.dataSources.map((d) => d.address)).toEqual(["data.null_data_source.unused"]);
    expect(summary?.resources[0]?.normalizedSource).not.toContain("comment");
    expect(summary?.requiredVersions).toEqual([">= 1.5.0"]);
  });

  it("ingests a larger real-world fixture with a local submodule", async () => {
    const { attributes, versionId } = await publish(await buildTarball(fixtureFiles("aws-vpc")));
    expect(attributes.status).toBe("ok");
    const names = (attributes.variables as { name: string }[]).map((v) => v.name);
    // Checked by hand against test/fixtures/terraform/aws-vpc/variables.tf.
    expect(names).toContain("cidr");
    expect(names).toContain("enable_nat_gateway");
    const vpc = (
      attributes.resources as { address: string; references: { variables: string[]; locals: string[] } }[]
    ).find((r) => r.address === "aws_vpc.this");
    expect(vpc?.references).toEqual({ variables: ["cidr", "name", "tags", "vpc_tags"], locals: ["create_vpc"] });
    expect((attributes.outputs as { name: string }[]).map((o) => o.name)).toContain("vpc_id");
    const row = await env.DB.prepare("SELECT status, summary FROM registry_module_versions WHERE id = ?")
      .bind(versionId)
      .first<{ status: "ok"; summary: string }>();
    const flowLog = versionSummary(row!)?.moduleCalls.find((m) => m.name === "flow_log");
    expect(flowLog?.local).toBe(true);
    expect(flowLog?.module).not.toBeNull();
  });

  it("processes a redelivered message idempotently through the real handler (N11)", async () => {
    const { versionId, read } = await publish(await buildTarball(PET_MODULE));
    const before = await env.DB.prepare("SELECT * FROM registry_module_versions WHERE id = ?").bind(versionId).first();
    const messages = [1, 2].map((i) => ({
      id: `redeliver-${i}`,
      timestamp: new Date(),
      attempts: 2,
      body: ingestModuleVersionMessage(versionId),
    }));
    const batch = createMessageBatch(PROVISION_QUEUE_NAME, messages);
    const ectx = createExecutionContext();
    await handleQueue(batch, env, ectx);
    const result = await getQueueResult(batch, ectx);
    expect(result.explicitAcks).toEqual(["redeliver-1", "redeliver-2"]);
    expect(await env.DB.prepare("SELECT * FROM registry_module_versions WHERE id = ?").bind(versionId).first()).toEqual(
      before,
    );
    expect(read.json.data.attributes.status).toBe("ok");
  });
});

/** Bad tarballs of N4 and B5, each with the words its error must contain. */
const BAD_TARBALLS: [string, () => Promise<Uint8Array> | Uint8Array, RegExp][] = [
  ["not gzip", () => buildTar(PET_MODULE), /gzip/i],
  ["garbage", () => new TextEncoder().encode("this is not an archive"), /gzip/i],
  [
    "a path that climbs out (..)",
    () =>
      buildTarball([
        { path: "../evil.tf", content: "" },
        { path: "main.tf", content: "" },
      ]),
    /"\.\.\/evil\.tf" escapes the module directory/,
  ],
  [
    "an absolute path",
    () => buildTarball([{ path: "/etc/evil.tf", content: "" }]),
    /"\/etc\/evil\.tf" has an absolute path/,
  ],
  [
    "a symbolic link",
    () => buildTarball([{ path: "main.tf", type: "symlink", linkTarget: "/etc/passwd" }]),
    /"main\.tf" is a symbolic link/,
  ],
  [
    "a hard link",
    () =>
      buildTarball([
        { path: "a.tf", content: "" },
        { path: "b.tf", type: "hardlink", linkTarget: "a.tf" },
      ]),
    /"b\.tf" is a hard link/,
  ],
  [
    "a device",
    () =>
      buildTarball([
        { path: "main.tf", content: "" },
        { path: "dev", type: "char-device" },
      ] as TarEntrySpec[]),
    /"dev" is a device/,
  ],
  [
    "no .tf file at the root",
    () => buildTarball({ "modules/x/main.tf": 'resource "null_resource" "x" {}', "README.md": "hi" }),
    /no \.tf file at the archive root/,
  ],
  [
    "a syntax error",
    () => buildTarball({ "main.tf": 'resource "null_resource" "x" {\n  triggers = {\n' }),
    /syntax error in main\.tf/,
  ],
  [
    "duplicate variables",
    () => buildTarball({ "a.tf": 'variable "region" {}\n', "b.tf": 'variable "region" {\n  default = "x"\n}\n' }),
    /duplicate variable "region"/,
  ],
  [
    "duplicate outputs",
    () => buildTarball({ "main.tf": 'output "o" {\n  value = 1\n}\noutput "o" {\n  value = 2\n}\n' }),
    /duplicate output "o"/,
  ],
  ["more than 1,000 entries", () => buildTarball({ "main.tf": "" }, { fillerEntries: 1000 }), /more than 1000 entries/],
  [
    "a .tf file over 1 MiB",
    () => buildTarball([{ path: "main.tf", zeros: 1024 * 1024 + 1 }]),
    /main\.tf is larger than 1 MiB/,
  ],
  [
    "over 50 MiB unpacked",
    () =>
      buildTarball([
        { path: "main.tf", content: "" },
        { path: "big.bin", zeros: 50 * 1024 * 1024 + 1 },
      ]),
    /more than 50 MiB/,
  ],
];

describe("bad tarballs leave the version reg_ingress_failed and change nothing else (N4, B5)", () => {
  it.each(BAD_TARBALLS)("%s", async (_what, make, message) => {
    // A module with an ok version first, to show that nothing else changes.
    const mod = await createModule(ctx.org, ctx.tokens.manager);
    const good = await publish(await buildTarball(PET_MODULE), "1.0.0", mod);
    expect(good.attributes.status).toBe("ok");
    const moduleBefore = (await tfe("GET", modulePath(ctx.org, mod.name), { token: ctx.tokens.member })).json;
    const goodRowBefore = await env.DB.prepare("SELECT * FROM registry_module_versions WHERE id = ?")
      .bind(good.versionId)
      .first();

    const bad = await publish(await make(), "1.1.0", mod);
    expect(bad.attributes.status).toBe("reg_ingress_failed");
    expect(bad.attributes.error).toMatch(message);
    expect(bad.attributes).toMatchObject({ variables: null, outputs: null, providers: null, resources: null });

    // Nothing stored for the failed version; the ok version and the module are unchanged.
    expect(await storedObjects(mod.id, bad.versionId)).toEqual([]);
    const summary = await env.DB.prepare("SELECT summary, tarball_key FROM registry_module_versions WHERE id = ?")
      .bind(bad.versionId)
      .first();
    expect(summary).toEqual({ summary: null, tarball_key: null });
    expect(
      await env.DB.prepare("SELECT * FROM registry_module_versions WHERE id = ?").bind(good.versionId).first(),
    ).toEqual(goodRowBefore);
    const moduleAfter = (await tfe("GET", modulePath(ctx.org, mod.name), { token: ctx.tokens.member })).json;
    expect(moduleAfter.data.attributes.status).toBe("setup_complete");
    expect(moduleAfter.data.attributes["updated-at"]).toBe(moduleBefore.data.attributes["updated-at"]);
    expect(moduleAfter.data.attributes["version-statuses"]).toEqual([
      { version: "1.1.0", status: "reg_ingress_failed", error: bad.attributes.error },
      { version: "1.0.0", status: "ok", error: null },
    ]);
    expect((await latestOkVersion(createDb(env.DB), mod.id))?.version).toBe("1.0.0");
  });
});

describe("latestOkVersion (N3)", () => {
  it("is null while no version is ok, then the highest non-pre-release ok version", async () => {
    const db = createDb(env.DB);
    const mod = await createModule(ctx.org, ctx.tokens.manager);
    await createVersion(ctx.org, mod.name, "9.0.0", ctx.tokens.manager); // pending: never latest
    expect(await latestOkVersion(db, mod.id)).toBeNull();

    const tarball = await buildTarball(PET_MODULE);
    await publish(tarball, "2.0.0-rc.1", mod); // ok but a pre-release
    expect(await latestOkVersion(db, mod.id)).toBeNull();
    await publish(tarball, "1.9.0", mod);
    await publish(tarball, "1.10.0", mod);
    await publish(tarball, "1.2.0", mod);
    await publish(buildTar(PET_MODULE), "1.11.0", mod); // failed: not gzip
    const latest = await latestOkVersion(db, mod.id);
    expect(latest?.version).toBe("1.10.0");
    expect(latest?.status).toBe("ok");
    expect(versionSummary(latest!)?.variables.map((v) => v.name)).toEqual(["prefix", "length", "tags", "seed"]);
  });
});
