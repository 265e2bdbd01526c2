/**
 * Versions of private registry modules (decisions N3, N4, N9; reference §5.1): create a
 * version (→ 201 with the single-use `links.upload`) and read one with its status, error
 * and what ingestion read from its source.
 */
import { Hono } from "hono";
import { createDb, type Db } from "../../db/client";
import { registryModuleVersions } from "../../db/schema";
import type { NocodeEnv } from "../env";
import type { NocodeCaller } from "../auth";
import { badRequest, invalidAttribute, notFound } from "../errors";
import { newId } from "../ids";
import { jsonApi } from "../respond";
import { attributePointer, FieldErrors, readResourceAttributes } from "./body";
import { type ModuleAddressParams, resolveModule } from "./modules";
import { findModuleVersion, PRIVATE_REGISTRY, type RegistryModuleVersionRow } from "./repo";
import { MAX_VERSION_LENGTH, parseSemver } from "./semver";
import { registryModuleVersionResource } from "./serialize";
import { newUploadLink } from "./uploads";
import { rights } from "../route-rights";

/** Accepted `data.type` of a version create (N1: tolerant input). */
const VERSION_TYPES = ["registry-module-versions", "registry-module-version"] as const;

/** Longest accepted `commit-sha`. */
const MAX_COMMIT_SHA_LENGTH = 128;

function parseVersionCreate(attrs: Record<string, unknown>): { version: string; commitSha: string | null } {
  const errors = new FieldErrors();
  const { version } = attrs;
  const commitSha = attrs["commit-sha"] ?? null;
  if (typeof version !== "string" || version === "") errors.add(attributePointer("version"), "Version can't be blank");
  else if (!parseSemver(version)) {
    errors.add(
      attributePointer("version"),
      `Version must be a semantic version such as 1.2.3 or 1.3.0-rc.1 (at most ${MAX_VERSION_LENGTH} characters)`,
    );
  }
  if (commitSha !== null && (typeof commitSha !== "string" || commitSha.length > MAX_COMMIT_SHA_LENGTH)) {
    errors.add(attributePointer("commit-sha"), `Commit SHA must be a string of at most ${MAX_COMMIT_SHA_LENGTH} characters`);
  }
  errors.throwIfAny();
  return { version: version as string, commitSha: commitSha as string | null };
}

/** Create a version of the addressed module; shared by the current and the deprecated path. */
async function createVersion(db: Db, env: Env, caller: NocodeCaller, params: ModuleAddressParams, request: Request) {
  // N10: a registry-module write needs manage-modules.
  const module = await resolveModule(db, caller, params, "manage-registry-modules");
  const attrs = await readResourceAttributes(request, VERSION_TYPES);
  const input = parseVersionCreate(attrs);
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
  try {
    await db.batch([db.insert(registryModuleVersions).values(row), upload.insert]);
  } catch (err) {
    if (await findModuleVersion(db, module.id, input.version)) throw taken();
    throw err;
  }
  return jsonApi({ data: registryModuleVersionResource(module, row, upload.link) }, 201);
}

/** Routes of registry module versions. */
export const versionRoutes = new Hono<NocodeEnv>();

versionRoutes.post("/organizations/:org/registry-modules/:registry/:namespace/:name/:provider/versions", rights({ right: "manage-registry-modules" }), async (c) =>
  createVersion(createDb(c.env.DB), c.env, c.var.caller, c.req.param(), c.req.raw),
);

// The deprecated path go-tfe still uses (reference §5.1): the namespace is the organization.
versionRoutes.post("/registry-modules/:namespace/:name/:provider/versions", rights({ right: "manage-registry-modules" }), async (c) => {
  const { namespace, name, provider } = c.req.param();
  const params = { org: namespace, registry: PRIVATE_REGISTRY, namespace, name, provider };
  return createVersion(createDb(c.env.DB), c.env, c.var.caller, params, c.req.raw);
});

versionRoutes.get("/organizations/:org/registry-modules/:registry/:namespace/:name/:provider/version", rights({ right: "member" }), async (c) => {
  const db = createDb(c.env.DB);
  const module = await resolveModule(db, c.var.caller, c.req.param(), "member");
  const wanted = c.req.query("module_version");
  if (wanted === undefined || wanted === "") throw badRequest("the module_version query parameter is required");
  const version = await findModuleVersion(db, module.id, wanted);
  if (!version) throw notFound();
  return jsonApi({ data: registryModuleVersionResource(module, version) });
});
