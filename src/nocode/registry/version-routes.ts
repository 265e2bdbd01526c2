/**
 * Versions of private registry modules (decisions N3, N4, N9; HCP Terraform's private registry API): create a
 * version (→ 201 with the single-use `links.upload`) and read one with its status, error
 * and what ingestion read from its source.
 */
import { type Context, Hono } from "hono";
import * as v from "valibot";
import type { Db } from "../../db/client";
import { insertUnique } from "../../db/unique";
import type { NocodeEnv } from "../env";
import { invalidAttribute, notFound } from "../errors";
import { newId } from "../ids";
import { single } from "../request/answers";
import { members, requiredText, resourceDocument } from "../request/document";
import { operation } from "../request/operation";
import { jsonApi } from "../respond";
import { organizationParam, rights } from "../route-rights";
import { type ModuleAddressParams, resolveModule } from "./module-routes";
import { findModuleVersion, insertModuleVersion, PRIVATE_REGISTRY, type RegistryModuleVersionRow } from "./repo";
import { MAX_VERSION_LENGTH, parseSemver } from "./semver";
import { registryModuleVersionAnswer, registryModuleVersionResource } from "./serialize";
import { newUploadLink } from "./uploads";

/** Accepted `data.type` of a version create (N1: tolerant input). */
const VERSION_TYPES = ["registry-module-versions", "registry-module-version"] as const;

/** Longest accepted `commit-sha`. */
const MAX_COMMIT_SHA_LENGTH = 128;

const versionCreate = operation({
  tag: "registry",
  summary: "Create a module version; answers its single-use upload link (N9)",
  body: resourceDocument({
    types: VERSION_TYPES,
    attributes: {
      version: v.pipe(
        requiredText("version"),
        v.check(
          (version) => parseSemver(version) !== null,
          `Version must be a semantic version such as 1.2.3 or 1.3.0-rc.1 (at most ${MAX_VERSION_LENGTH} characters)`,
        ),
      ),
      "commit-sha": v.optional(
        v.nullable(
          v.pipe(
            v.string(`Commit SHA must be a string of at most ${MAX_COMMIT_SHA_LENGTH} characters`),
            v.maxLength(
              MAX_COMMIT_SHA_LENGTH,
              `Commit SHA must be a string of at most ${MAX_COMMIT_SHA_LENGTH} characters`,
            ),
          ),
        ),
      ),
    },
  }),
  answers: {
    201: { description: "The version (`pending`), with `links.upload`", schema: single(registryModuleVersionAnswer) },
  },
});

/** Create a version of the addressed module; shared by the current and the deprecated path. */
async function createVersion(c: Context<NocodeEnv>, db: Db, env: Env, params: ModuleAddressParams) {
  const request = c.req.raw;
  const module = await resolveModule(db, params);
  const { attributes } = (await versionCreate.body(c)).data;
  const input = { version: attributes.version, commitSha: attributes["commit-sha"] ?? null };
  const taken = () => invalidAttribute("version", "Version has already been taken");
  if (await findModuleVersion(db, module.id, input.version)) throw taken();
  const now = Date.now();
  const row: RegistryModuleVersionRow = {
    id: newId("modver"),
    moduleId: module.id,
    version: input.version,
    commitSha: input.commitSha,
    status: "pending",
    error: null,
    tarballKey: null,
    tarballBytes: null,
    summary: null,
    createdAt: now,
    updatedAt: now,
    uploadedAt: null,
    ingestedAt: null,
  };
  const upload = await newUploadLink(db, env, new URL(request.url).origin, row.id, now);
  await insertUnique(insertModuleVersion(db, row, upload.insert), taken);
  return jsonApi({ data: registryModuleVersionResource(module, row, upload.link) }, 201);
}

/** Routes of registry module versions. */
export const versionRoutes = new Hono<NocodeEnv>();

versionRoutes.post(
  "/organizations/:org/registry-modules/:registry/:namespace/:name/:provider/versions",
  rights({ right: "manage-registry-modules" }),
  versionCreate,
  async (c) => createVersion(c, c.var.db, c.env, c.req.param()),
);

// The deprecated path go-tfe still uses (HCP Terraform's private registry API): the namespace is the organization.
versionRoutes.post(
  "/registry-modules/:namespace/:name/:provider/versions",
  rights({ right: "manage-registry-modules" }, { scope: organizationParam("namespace") }),
  versionCreate,
  async (c) => {
    const { namespace, name, provider } = c.req.param();
    const params = { org: namespace, registry: PRIVATE_REGISTRY, namespace, name, provider };
    return createVersion(c, c.var.db, c.env, params);
  },
);

const MODULE_VERSION_REQUIRED = "the module_version query parameter is required";

const versionShow = operation({
  tag: "registry",
  summary: "Show a module version with its status and what ingestion read (members)",
  query: members(
    { module_version: v.pipe(v.string(MODULE_VERSION_REQUIRED), v.nonEmpty(MODULE_VERSION_REQUIRED)) },
    MODULE_VERSION_REQUIRED,
    () => MODULE_VERSION_REQUIRED,
  ),
  answers: { 200: { description: "The version", schema: single(registryModuleVersionAnswer) } },
});

versionRoutes.get(
  "/organizations/:org/registry-modules/:registry/:namespace/:name/:provider/version",
  rights({ right: "member" }),
  versionShow,
  async (c) => {
    const db = c.var.db;
    const module = await resolveModule(db, c.req.param());
    const wanted = versionShow.query(c).module_version;
    const version = await findModuleVersion(db, module.id, wanted);
    if (!version) throw notFound();
    return jsonApi({ data: registryModuleVersionResource(module, version) });
  },
);
