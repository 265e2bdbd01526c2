/**
 * B13: Terraform's module registry protocol over the private registry — versions list,
 * download (204 + X-Terraform-Get), and the signed, short-lived, single-version link.
 * Modules are published through the real upload link and Queue consumer.
 */
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { handleFetch } from "../../../../src/index";
import { type BootstrappedOrg, bootstrapOrg, createMember, createOrgToken } from "../../../helpers/nocode";
import {
  createPendingVersion,
  createRegistryModule,
  publishVersion,
  type RegistryModuleRef,
} from "../../../helpers/nocode-modules";
import { workerRequest } from "../../../helpers/worker-request";

let site: BootstrappedOrg;
let pet: RegistryModuleRef;
let other: RegistryModuleRef;

const base = "http://keyway.test/api/registry/v1/modules";
const get = (url: string, token: string | null) =>
  workerRequest(url, { method: "GET", headers: token === null ? {} : { Authorization: `Bearer ${token}` } });

async function downloadLink(org: string, module: RegistryModuleRef, version: string, token: string): Promise<string> {
  const res = await get(`${base}/${org}/${module.name}/${module.provider}/${version}/download`, token);
  expect(res.status).toBe(204);
  return res.headers.get("X-Terraform-Get")!;
}

/** GET a download link as Terraform does (no token), keeping the body as bytes. */
async function fetchArchive(link: string) {
  const ctx = createExecutionContext();
  const res = await handleFetch(new Request(link), env, ctx);
  const bytes = await res.arrayBuffer();
  await waitOnExecutionContext(ctx);
  return {
    status: res.status,
    headers: res.headers,
    bytes,
    json: res.headers.get("Content-Type")?.includes("json") ? JSON.parse(new TextDecoder().decode(bytes)) : null,
  };
}

async function gunzipText(bytes: ArrayBuffer): Promise<string> {
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new TextDecoder().decode(await new Response(stream).arrayBuffer());
}

beforeAll(async () => {
  site = await bootstrapOrg();
  pet = await createRegistryModule(site.org, site.ownerToken);
  for (const v of ["1.0.0", "1.10.0", "1.2.0"])
    expect((await publishVersion(site.org, pet, v, site.ownerToken)).status).toBe("ok");
  await createPendingVersion(site.org, pet, "2.0.0", site.ownerToken); // never uploaded: not listed
  other = await createRegistryModule(site.org, site.ownerToken);
  expect((await publishVersion(site.org, other, "1.0.0", site.ownerToken)).status).toBe("ok");
}, 120_000);

afterEach(() => {
  vi.useRealTimers();
});

describe("module registry protocol (B13)", () => {
  it("lists the downloadable versions in the protocol's shape", async () => {
    const res = await get(`${base}/${site.org}/${pet.name}/${pet.provider}/versions`, site.ownerToken);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      modules: [{ versions: [{ version: "1.0.0" }, { version: "1.2.0" }, { version: "1.10.0" }] }],
    });
  });

  it("needs a token that may read the organization's registry", async () => {
    const path = `${base}/${site.org}/${pet.name}/${pet.provider}/versions`;
    expect((await get(path, null)).status).toBe(401);
    expect((await get(path, "nope.atlasv1.nope")).status).toBe(401);
    const member = await createMember(site.org);
    expect((await get(path, member.token)).status).toBe(200);
    expect((await get(path, await createOrgToken(site.org))).status).toBe(200);
    const stranger = await bootstrapOrg();
    expect((await get(path, stranger.ownerToken)).status).toBe(404);
    expect((await get(`${base}/${site.org}/absent/${pet.provider}/versions`, site.ownerToken)).status).toBe(404);
  });

  it("download answers 204 with a signed link ending in archive=tar.gz that serves the tarball", async () => {
    const link = await downloadLink(site.org, pet, "1.2.0", site.ownerToken);
    expect(link).toMatch(
      new RegExp(
        `^http://keyway\\.test/api/registry/v1/modules/${site.org}/${pet.name}/${pet.provider}/1\\.2\\.0/archive\\?`,
      ),
    );
    expect(link.endsWith("&archive=tar.gz")).toBe(true);
    const res = await fetchArchive(link);
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toBe("application/gzip");
    // B23: a signed link's answer is never cached and never leaks through a Referer.
    expect(res.headers.get("Cache-Control")).toBe("no-store");
    expect(res.headers.get("Referrer-Policy")).toBe("no-referrer");
    expect(await gunzipText(res.bytes)).toContain("random_pet");
  });

  it("download needs the token too, and only ingested versions have one", async () => {
    const path = `${base}/${site.org}/${pet.name}/${pet.provider}/1.0.0/download`;
    expect((await get(path, null)).status).toBe(401);
    expect((await get(`${base}/${site.org}/${pet.name}/${pet.provider}/2.0.0/download`, site.ownerToken)).status).toBe(
      404,
    );
    expect((await get(`${base}/${site.org}/${pet.name}/${pet.provider}/9.9.9/download`, site.ownerToken)).status).toBe(
      404,
    );
  });

  it("refuses a link once expired", async () => {
    const link = await downloadLink(site.org, pet, "1.0.0", site.ownerToken);
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + 301_000);
    const res = await fetchArchive(link);
    expect(res.status).toBe(404);
    expect(res.json.errors[0].detail).toBe("the download link is invalid or has expired");
    expect(res.headers.get("Cache-Control")).toBe("no-store");
    expect(res.headers.get("Referrer-Policy")).toBe("no-referrer");
  });

  it("refuses a link for another module or another version, or with a changed expiry", async () => {
    const link = new URL(await downloadLink(site.org, pet, "1.0.0", site.ownerToken));
    const otherModule = new URL(link);
    otherModule.pathname = link.pathname.replace(`/${pet.name}/`, `/${other.name}/`);
    expect((await workerRequest(otherModule.href, { method: "GET" })).status).toBe(404);
    const otherVersion = new URL(link);
    otherVersion.pathname = link.pathname.replace("/1.0.0/", "/1.2.0/");
    expect((await workerRequest(otherVersion.href, { method: "GET" })).status).toBe(404);
    const later = new URL(link);
    later.searchParams.set("expires", String(Number(link.searchParams.get("expires")) + 3600));
    expect((await workerRequest(later.href, { method: "GET" })).status).toBe(404);
    const unsigned = new URL(link);
    unsigned.searchParams.delete("signature");
    expect((await workerRequest(unsigned.href, { method: "GET" })).status).toBe(404);
    // B23: a bad signature (one character changed, or a valid MAC of another purpose) is 404.
    const forged = new URL(link);
    const sig = link.searchParams.get("signature")!;
    forged.searchParams.set("signature", `${sig[0] === "A" ? "B" : "A"}${sig.slice(1)}`);
    const refused = await workerRequest(forged.href, { method: "GET" });
    expect(refused.status).toBe(404);
    expect(refused.headers.get("Referrer-Policy")).toBe("no-referrer");
    // The untouched link still works (go-getter drops `archive` before fetching).
    link.searchParams.delete("archive");
    expect((await fetchArchive(link.href)).status).toBe(200);
  });
});
