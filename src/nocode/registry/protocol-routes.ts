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
 * carries its own credential: a signed link (B23, src/lib/crypto/signed-link.ts, purpose
 * `registry-download`) over the version's id and an expiry five minutes ahead. It opens
 * that one version of that one module until it expires, and is refused (404) otherwise;
 * every answer of it is `no-store` and `no-referrer`. It serves the version's recorded
 * tarball only (B16). Private modules have the
 * organization as namespace (N9), so `:org` is both.
 */

import { Hono } from "hono";
import * as v from "valibot";
import { createDb } from "../../db/client";
import { SIGNED_LINK_HEADERS, signLink, verifySignedLink } from "../../lib/crypto/signed-link";
import { authenticateNocode, bearerToken, type NocodeCaller } from "../access/auth";
import { registryTokenCaller } from "../agent-pools/job-queue";
import type { NocodeEnv } from "../env";
import { NocodeError, notFound, renderNocodeError, unauthorized } from "../errors";
import { operation } from "../request/operation";
import { rights } from "../route-rights";
import {
  downloadableVersions,
  findModuleVersion,
  findRegistryModule,
  PRIVATE_REGISTRY,
  type RegistryModuleRow,
} from "./repo";
import { MAX_VERSION_LENGTH } from "./semver";

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
    const versions = await downloadableVersions(db, module.id);
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
    const { expiry: expires, signature } = await signLink(
      c.env.KEYWAY_HASH_KEY,
      { purpose: DOWNLOAD_LINK_PURPOSE, id: version.id },
      Date.now(),
      DOWNLOAD_LINK_TTL_S,
    );
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
    expires: v.pipe(v.string(), v.regex(/^[1-9]\d{0,11}$/)),
    signature: v.pipe(v.string(), v.regex(/^[A-Za-z0-9_-]{43}$/)),
    archive: v.optional(v.literal("tar.gz")),
  }),
  answers: { 200: { description: "The module's tarball", contentType: "application/gzip", schema: v.string() } },
  errors: [404],
});

registryProtocolApp.get(
  "/modules/:org/:name/:provider/:version/archive",
  rights({ caller: "public" }),
  archive,
  // B23: every answer of the signed link, refusals included, is no-store and no-referrer.
  async (c, next) => {
    await next();
    for (const [name, value] of Object.entries(SIGNED_LINK_HEADERS)) c.res.headers.set(name, value);
  },
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
    const db = createDb(c.env.DB);
    let version: Awaited<ReturnType<typeof downloadableVersion>>;
    try {
      version = await downloadableVersion(db, params);
    } catch (err) {
      if (err instanceof NocodeError) throw linkRefused();
      throw err;
    }
    const verdict = await verifySignedLink(
      c.env.KEYWAY_HASH_KEY,
      { purpose: DOWNLOAD_LINK_PURPOSE, id: version.id },
      query.expires,
      query.signature,
      Date.now(),
      DOWNLOAD_LINK_TTL_S,
    );
    if (!verdict.ok) throw linkRefused();
    const object = await c.env.MODULES.get(version.tarballKey);
    if (!object) throw linkRefused();
    return new Response(object.body, {
      status: 200,
      headers: {
        "Content-Type": "application/gzip",
        "Content-Length": String(object.size),
        ...SIGNED_LINK_HEADERS,
      },
    });
  },
);
