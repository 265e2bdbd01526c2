/**
 * Terraform's module registry protocol over the private registry (decision B13), so
 * `terraform init` can use `<host>/<organization>/<name>/<provider>` modules. Service
 * discovery (`/.well-known/terraform.json`, B12) names `/api/registry/v1/modules/`.
 *
 * - `GET …/:org/:name/:provider/versions` → `{"modules":[{"versions":[{"version"}…]}]}`:
 *   the versions that can be downloaded (ingested: `ok`).
 * - `GET …/:org/:name/:provider/:version/download` → 204 with `X-Terraform-Get` naming a
 *   download link of that version's tarball, ending in `&archive=tar.gz` so go-getter
 *   unpacks it.
 *
 * Both take `Authorization: Bearer` with a token that may read the organization's
 * registry (N10's `member`): 401 without a valid token, 404 when the module is absent or
 * not readable (N2). Terraform does not send the token to the download link, so the link
 * carries its own credential: an HMAC (KEYWAY_HASH_KEY, purpose `registry-download`) over
 * the version's id and an expiry five minutes ahead. It opens that one version of that one
 * module until it expires, and is refused (404) otherwise. Private modules have the
 * organization as namespace (N9), so `:org` is both.
 */

import { and, eq } from "drizzle-orm";
import { Hono } from "hono";
import * as v from "valibot";
import { createDb } from "../../db/client";
import { registryModuleVersions } from "../../db/schema";
import { keyedHash } from "../../lib/crypto/hmac";
import { registryTokenCaller } from "../agent-queue";
import { authenticateNocode, bearerToken, type NocodeCaller } from "../auth";
import type { NocodeEnv } from "../env";
import { NocodeError, notFound, renderNocodeError, unauthorized } from "../errors";
import { operation } from "../request/operation";
import { rights } from "../route-rights";
import { findModuleVersion, findRegistryModule, PRIVATE_REGISTRY, type RegistryModuleRow } from "./repo";
import { compareVersionStrings, MAX_VERSION_LENGTH } from "./semver";

/** B13: download links are short-lived. */
export const DOWNLOAD_LINK_TTL_S = 300;

/** Purpose string of the download links' HMAC (B2's domain separation). */
export const DOWNLOAD_LINK_PURPOSE = "registry-download";

/** The caller of an agent job's registry token sent as Bearer (N18), or null. */
async function registryCallerOf(env: Env, headers: Headers): Promise<NocodeCaller | null> {
  const token = bearerToken(headers);
  return token ? registryTokenCaller(env, createDb(env.DB), token) : null;
}

/** The path below which this app is mounted. */
export const REGISTRY_PROTOCOL_PREFIX = "/api/registry/v1";

export const registryProtocolApp = new Hono<NocodeEnv>();
registryProtocolApp.onError(renderNocodeError);

/** The tarball route carries its own credential (the signed link); every other path needs a token. */
const isArchivePath = (path: string) => path.endsWith("/archive");

registryProtocolApp.use("*", async (c, next) => {
  if (c.req.method === "GET" && isArchivePath(c.req.path)) return next();
  // N18: besides the API's tokens, a running agent job's registry token reads its organization's modules.
  const caller =
    (await authenticateNocode(c.env, c.req.raw.headers)) ??
    (c.req.method === "GET" ? await registryCallerOf(c.env, c.req.raw.headers) : null);
  if (!caller) throw unauthorized();
  c.set("caller", caller);
  c.set("db", createDb(c.env.DB));
  await next();
});

interface ModuleParams {
  org: string;
  name: string;
  provider: string;
}

async function findModule(db: ReturnType<typeof createDb>, p: ModuleParams): Promise<RegistryModuleRow> {
  const module = await findRegistryModule(db, {
    organization: p.org,
    registryName: PRIVATE_REGISTRY,
    namespace: p.org,
    name: p.name,
    provider: p.provider,
  });
  if (!module) throw notFound();
  return module;
}

registryProtocolApp.get(
  "/modules/:org/:name/:provider/versions",
  rights({ right: "member" }),
  operation({
    tag: "registry protocol",
    summary: "List a module's downloadable versions (Terraform's module registry protocol, B13)",
    answers: {
      200: {
        description: "The versions that are ingested (`ok`), lowest first",
        contentType: "application/json",
        schema: v.strictObject({
          modules: v.array(v.strictObject({ versions: v.array(v.strictObject({ version: v.string() })) })),
        }),
      },
    },
  }),
  async (c) => {
    const params = c.req.param();
    const db = c.var.db;
    const module = await findModule(db, params);
    const rows = await db
      .select({ version: registryModuleVersions.version })
      .from(registryModuleVersions)
      .where(and(eq(registryModuleVersions.moduleId, module.id), eq(registryModuleVersions.status, "ok")))
      .all();
    const versions = rows.map((r) => r.version).sort(compareVersionStrings);
    return c.json({ modules: [{ versions: versions.map((version) => ({ version })) }] });
  },
);

async function downloadableVersion(db: ReturnType<typeof createDb>, params: ModuleParams & { version: string }) {
  if (params.version.length > MAX_VERSION_LENGTH) throw notFound();
  const module = await findModule(db, params);
  const version = await findModuleVersion(db, module.id, params.version);
  if (version?.status !== "ok" || !version.tarballKey) throw notFound();
  return { ...version, tarballKey: version.tarballKey };
}

function signLink(env: Env, versionId: string, expires: number): Promise<string> {
  return keyedHash(env.KEYWAY_HASH_KEY, DOWNLOAD_LINK_PURPOSE, `${versionId}\n${expires}`);
}

/** Constant-time equality of two hex strings (the expected one is always 64 characters). */
function hexEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

registryProtocolApp.get(
  "/modules/:org/:name/:provider/:version/download",
  rights({ right: "member" }),
  operation({
    tag: "registry protocol",
    summary: "Where to download a version (B13): a signed, short-lived link in X-Terraform-Get",
    answers: {
      204: {
        description: "The link, ending in `&archive=tar.gz` as go-getter needs",
        headers: { "X-Terraform-Get": { description: "The signed download link of this one version" } },
      },
    },
  }),
  async (c) => {
    const params = c.req.param();
    const db = c.var.db;
    const version = await downloadableVersion(db, params);
    const expires = Math.floor(Date.now() / 1000) + DOWNLOAD_LINK_TTL_S;
    const signature = await signLink(c.env, version.id, expires);
    const path = [params.org, params.name, params.provider, params.version].map(encodeURIComponent).join("/");
    const link = `${new URL(c.req.url).origin}${REGISTRY_PROTOCOL_PREFIX}/modules/${path}/archive?expires=${expires}&signature=${signature}&archive=tar.gz`;
    return c.body(null, 204, { "X-Terraform-Get": link });
  },
);

const linkRefused = () => new NocodeError("not_found", "the download link is invalid or has expired");

const archive = operation({
  tag: "registry protocol",
  summary: "Download a version's tarball through its signed link (B13; the link is the credential)",
  query: v.looseObject({
    expires: v.pipe(v.string(), v.regex(/^\d{1,12}$/)),
    signature: v.pipe(v.string(), v.regex(/^[0-9a-f]{64}$/)),
    archive: v.optional(v.literal("tar.gz")),
  }),
  answers: { 200: { description: "The module's tarball", contentType: "application/gzip", schema: v.string() } },
  errors: [404],
});

registryProtocolApp.get(
  "/modules/:org/:name/:provider/:version/archive",
  rights({ caller: "public" }),
  archive,
  async (c) => {
    const params = c.req.param();
    let query: ReturnType<typeof archive.query>;
    try {
      query = archive.query(c);
    } catch (err) {
      // A malformed link is refused as any other bad credential is: 404, not 400.
      if (err instanceof NocodeError) throw linkRefused();
      throw err;
    }
    const signature = query.signature;
    const expires = Number(query.expires);
    if (expires < Date.now() / 1000) throw linkRefused();
    const db = createDb(c.env.DB);
    let version: Awaited<ReturnType<typeof downloadableVersion>>;
    try {
      version = await downloadableVersion(db, params);
    } catch (err) {
      if (err instanceof NocodeError) throw linkRefused();
      throw err;
    }
    if (!hexEqual(signature, await signLink(c.env, version.id, expires))) throw linkRefused();
    const object = await c.env.MODULES.get(version.tarballKey);
    if (!object) throw linkRefused();
    return new Response(object.body, {
      status: 200,
      headers: {
        "Content-Type": "application/gzip",
        "Content-Length": String(object.size),
        "Cache-Control": "private, no-store",
      },
    });
  },
);
