/**
 * The engine release list (decision N6): `GET|POST /admin/terraform-versions`,
 * `GET|PATCH|DELETE /admin/terraform-versions/:id`, ADMIN_TOKEN only (N10; everyone
 * else gets 404). The list is seeded by migration 0002 with every stable 1.x release.
 */
import { Hono } from "hono";
import * as v from "valibot";
import type { Db } from "../../db/client";
import { insertUnique } from "../../db/unique";
import type { NocodeEnv } from "../env";
import { invalidAttribute, notFound } from "../errors";
import { newId } from "../ids";
import { pagedList, single } from "../request/answers";
import { attributeLabel, flag, nullableText, requiredText, resourceDocument } from "../request/document";
import { operation } from "../request/operation";
import { pageOf, pageParameters } from "../request/query";
import { jsonApi, jsonApiPage, noContent } from "../respond";
import { rights } from "../route-rights";
import { deleteRelease, findRelease, insertRelease, listReleases, updateRelease, versionInUse } from "./repo";
import { type ReleaseRow, releaseAnswer, serializeRelease } from "./serialize";
import { EXACT_VERSION } from "./version-constraints";

export const releaseRoutes = new Hono<NocodeEnv>();

// N10: ADMIN_TOKEN only; for any other caller these paths do not exist, whatever the method
// (each route declares the same rule for the authorization matrix).
releaseRoutes.use("/admin/terraform-versions", rights({ caller: "admin" }));
releaseRoutes.use("/admin/terraform-versions/*", rights({ caller: "admin" }));

const TYPES = ["terraform-versions", "terraform-version"] as const;
const TEXT_MAX = 2048;
const SEMVER = "Version must be a semantic version (X.Y.Z or X.Y.Z-prerelease)";

/** A free-text attribute of at most TEXT_MAX characters, or null. */
const longText = (name: string) =>
  v.pipe(
    nullableText(name),
    v.check(
      (t) => typeof t !== "string" || t.length <= TEXT_MAX,
      `${name} is too long (maximum is ${TEXT_MAX} characters)`,
    ),
  );

/** The writable attributes; `version` (`X.Y.Z[-prerelease]`) is required on create only. */
function releaseAttributes<V extends v.GenericSchema>(version: V) {
  return {
    version,
    url: longText("url"),
    sha: longText("sha"),
    "deprecated-reason": longText("deprecated-reason"),
    official: flag("official"),
    enabled: flag("enabled"),
    beta: flag("beta"),
    deprecated: flag("deprecated"),
  };
}

const releaseCreate = operation({
  tag: "terraform-versions",
  summary: "Add a release to the engine release list (ADMIN_TOKEN: N6, N10)",
  body: resourceDocument({
    types: TYPES,
    attributes: releaseAttributes(v.pipe(requiredText("version"), v.regex(EXACT_VERSION, SEMVER))),
  }),
  answers: { 201: { description: "The release", schema: single(releaseAnswer) } },
});

const releaseUpdate = operation({
  tag: "terraform-versions",
  summary: "Change a release (ADMIN_TOKEN); attributes omitted keep their value",
  body: resourceDocument({
    types: TYPES,
    attributes: releaseAttributes(
      v.optional(
        v.pipe(
          v.string((issue) =>
            issue.input === null ? "Version can't be blank" : `${attributeLabel("version")} must be a string`,
          ),
          v.regex(EXACT_VERSION, SEMVER),
        ),
      ),
    ),
  }),
  answers: { 200: { description: "The release", schema: single(releaseAnswer) } },
});

const versionTaken = () => invalidAttribute("version", "Version has already been taken");

/** The release `id`, or 404. */
async function requireRelease(db: Db, id: string): Promise<ReleaseRow> {
  const row = await findRelease(db, id);
  if (!row) throw notFound();
  return row;
}

const releaseList = operation({
  tag: "terraform-versions",
  summary: "List the engine release list, newest first (ADMIN_TOKEN)",
  query: v.looseObject({
    ...pageParameters,
    "filter[version]": v.optional(v.string()),
    "search[version]": v.optional(v.string()),
  }),
  answers: { 200: { description: "One page of releases", schema: pagedList(releaseAnswer) } },
});

releaseRoutes.get("/admin/terraform-versions", rights({ caller: "admin" }), releaseList, async (c) => {
  const query = releaseList.query(c);
  const page = pageOf(query);
  const filter = { exact: query["filter[version]"], search: query["search[version]"] };
  const listed = await listReleases(c.var.db, filter, page);
  return jsonApiPage(c.req.url, page, listed, serializeRelease);
});

releaseRoutes.post("/admin/terraform-versions", rights({ caller: "admin" }), releaseCreate, async (c) => {
  const attributes = (await releaseCreate.body(c)).data.attributes;
  const a = { ...attributes, deprecatedReason: attributes["deprecated-reason"] };
  const db = c.var.db;
  if (await versionInUse(db, a.version)) throw versionTaken();
  const now = Date.now();
  const row: ReleaseRow = {
    id: newId("tool"),
    version: a.version,
    url: a.url ?? null,
    sha: a.sha ?? null,
    official: a.official ?? false,
    enabled: a.enabled ?? true,
    // A pre-release is beta unless the admin says otherwise.
    beta: a.beta ?? a.version.includes("-"),
    deprecated: a.deprecated ?? false,
    deprecatedReason: a.deprecatedReason ?? null,
    createdAt: now,
    updatedAt: now,
  };
  await insertUnique(insertRelease(db, row), versionTaken);
  return jsonApi({ data: serializeRelease(row) }, 201);
});

const releaseShow = operation({
  tag: "terraform-versions",
  summary: "Show a release (ADMIN_TOKEN)",
  answers: { 200: { description: "The release", schema: single(releaseAnswer) } },
});

releaseRoutes.get("/admin/terraform-versions/:id", rights({ caller: "admin" }), releaseShow, async (c) => {
  const row = await requireRelease(c.var.db, c.req.param("id"));
  return jsonApi({ data: serializeRelease(row) });
});

releaseRoutes.patch("/admin/terraform-versions/:id", rights({ caller: "admin" }), releaseUpdate, async (c) => {
  const db = c.var.db;
  const existing = await requireRelease(db, c.req.param("id"));
  const attributes = (await releaseUpdate.body(c)).data.attributes;
  const a = { ...attributes, deprecatedReason: attributes["deprecated-reason"] };
  if (typeof a.version === "string" && (await versionInUse(db, a.version, existing.id))) throw versionTaken();
  const updated: ReleaseRow = {
    ...existing,
    version: a.version ?? existing.version,
    url: a.url === undefined ? existing.url : a.url,
    sha: a.sha === undefined ? existing.sha : a.sha,
    official: a.official ?? existing.official,
    enabled: a.enabled ?? existing.enabled,
    beta: a.beta ?? existing.beta,
    deprecated: a.deprecated ?? existing.deprecated,
    deprecatedReason: a.deprecatedReason === undefined ? existing.deprecatedReason : a.deprecatedReason,
    updatedAt: Date.now(),
  };
  await insertUnique(updateRelease(db, updated), versionTaken);
  return jsonApi({ data: serializeRelease(updated) });
});

const releaseDelete = operation({
  tag: "terraform-versions",
  summary: "Remove a release from the list (ADMIN_TOKEN)",
  answers: { 204: { description: "Removed" } },
});

releaseRoutes.delete("/admin/terraform-versions/:id", rights({ caller: "admin" }), releaseDelete, async (c) => {
  const db = c.var.db;
  const existing = await requireRelease(db, c.req.param("id"));
  await deleteRelease(db, existing.id);
  return noContent();
});
