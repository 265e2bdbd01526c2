/**
 * The engine release list (decision N6): `GET|POST /admin/terraform-versions`,
 * `GET|PATCH|DELETE /admin/terraform-versions/:id`, ADMIN_TOKEN only (N10; everyone
 * else gets 404). The list is seeded by migration 0002 with every stable 1.x release.
 */
import { eq } from "drizzle-orm";
import { Hono } from "hono";
import { createDb, type Db } from "../../db/client";
import { terraformVersions } from "../../db/schema";
import { isUniqueViolation } from "../../db/errors";
import type { NocodeEnv } from "../env";
import { invalidAttribute, notFound } from "../errors";
import { newId } from "../ids";
import { FieldErrors, pageDocument, pageRequest, readResource } from "../jsonapi";
import { jsonApi, noContent } from "../respond";
import { type ReleaseRow, serializeRelease } from "./serialize";
import { compareVersions, EXACT_VERSION, parseVersion } from "./version-constraints";
import { rights } from "../route-rights";

export const releaseRoutes = new Hono<NocodeEnv>();

// N10: ADMIN_TOKEN only; for any other caller these paths do not exist.
releaseRoutes.use("/admin/terraform-versions", async (c, next) => {
  if (c.var.caller.kind !== "admin") throw notFound();
  await next();
});
releaseRoutes.use("/admin/terraform-versions/*", async (c, next) => {
  if (c.var.caller.kind !== "admin") throw notFound();
  await next();
});

const TYPES = ["terraform-versions", "terraform-version"];
const TEXT_MAX = 2048;

/** Validated writable attributes; `version` must be `X.Y.Z[-prerelease]`. */
function readAttributes(attrs: Record<string, unknown>, creating: boolean) {
  const errors = new FieldErrors();
  const version = creating ? errors.required(attrs, "version") : errors.string(attrs, "version");
  if (!creating && attrs["version"] === null) errors.add("version", "Version can't be blank");
  if (typeof version === "string" && !EXACT_VERSION.test(version)) {
    errors.add("version", "Version must be a semantic version (X.Y.Z or X.Y.Z-prerelease)");
  }
  const text = (name: string) => {
    const value = errors.string(attrs, name, { nullable: true });
    if (typeof value === "string" && value.length > TEXT_MAX) errors.add(name, `${name} is too long (maximum is ${TEXT_MAX} characters)`);
    return value;
  };
  const out = {
    version,
    url: text("url"),
    sha: text("sha"),
    deprecatedReason: text("deprecated-reason"),
    official: errors.boolean(attrs, "official"),
    enabled: errors.boolean(attrs, "enabled"),
    beta: errors.boolean(attrs, "beta"),
    deprecated: errors.boolean(attrs, "deprecated"),
  };
  errors.throwIfAny();
  return out;
}

const versionTaken = () => invalidAttribute("version", "Version has already been taken");

async function findRelease(db: Db, id: string): Promise<ReleaseRow> {
  const row = await db.select().from(terraformVersions).where(eq(terraformVersions.id, id)).get();
  if (!row) throw notFound();
  return row;
}

async function versionInUse(db: Db, version: string, exceptId?: string): Promise<boolean> {
  const row = await db.select({ id: terraformVersions.id }).from(terraformVersions).where(eq(terraformVersions.version, version)).get();
  return row !== undefined && row.id !== exceptId;
}

releaseRoutes.get("/admin/terraform-versions", rights({ caller: "admin" }), async (c) => {
  const db = createDb(c.env.DB);
  const url = new URL(c.req.url);
  const page = pageRequest(url);
  const exact = url.searchParams.get("filter[version]");
  const search = url.searchParams.get("search[version]");
  let rows = await db.select().from(terraformVersions).all();
  if (exact) rows = rows.filter((r) => exact.split(",").includes(r.version));
  if (search) rows = rows.filter((r) => r.version.includes(search));
  // Newest first, by version precedence (not by string).
  rows.sort((a, b) => {
    const va = parseVersion(a.version);
    const vb = parseVersion(b.version);
    return va && vb ? compareVersions(vb, va) : b.version.localeCompare(a.version);
  });
  const slice = rows.slice(page.offset, page.offset + page.size);
  return jsonApi({ data: slice.map(serializeRelease), ...pageDocument(url, page, rows.length) });
});

releaseRoutes.post("/admin/terraform-versions", rights({ caller: "admin" }), async (c) => {
  const input = await readResource(c.req.raw, TYPES);
  const a = readAttributes(input.attributes, true);
  const db = createDb(c.env.DB);
  if (await versionInUse(db, a.version!)) throw versionTaken();
  const now = Date.now();
  const row: ReleaseRow = {
    id: newId("tool"),
    version: a.version!,
    url: a.url ?? null,
    sha: a.sha ?? null,
    official: a.official ?? false,
    enabled: a.enabled ?? true,
    // A pre-release is beta unless the admin says otherwise.
    beta: a.beta ?? a.version!.includes("-"),
    deprecated: a.deprecated ?? false,
    deprecatedReason: a.deprecatedReason ?? null,
    createdAt: now,
    updatedAt: now,
  };
  try {
    await db.insert(terraformVersions).values(row);
  } catch (err) {
    if (isUniqueViolation(err)) throw versionTaken();
    throw err;
  }
  return jsonApi({ data: serializeRelease(row) }, 201);
});

releaseRoutes.get("/admin/terraform-versions/:id", rights({ caller: "admin" }), async (c) => {
  const row = await findRelease(createDb(c.env.DB), c.req.param("id"));
  return jsonApi({ data: serializeRelease(row) });
});

releaseRoutes.patch("/admin/terraform-versions/:id", rights({ caller: "admin" }), async (c) => {
  const db = createDb(c.env.DB);
  const existing = await findRelease(db, c.req.param("id"));
  const input = await readResource(c.req.raw, TYPES);
  const a = readAttributes(input.attributes, false);
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
  try {
    await db.update(terraformVersions).set(updated).where(eq(terraformVersions.id, existing.id));
  } catch (err) {
    if (isUniqueViolation(err)) throw versionTaken();
    throw err;
  }
  return jsonApi({ data: serializeRelease(updated) });
});

releaseRoutes.delete("/admin/terraform-versions/:id", rights({ caller: "admin" }), async (c) => {
  const db = createDb(c.env.DB);
  const existing = await findRelease(db, c.req.param("id"));
  await db.delete(terraformVersions).where(eq(terraformVersions.id, existing.id));
  return noContent();
});
