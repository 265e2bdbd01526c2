/**
 * Seeding the real Worker for the console's browser tests, from Node, through the public
 * API only (N9): organizations, users, teams and tokens, a private module whose versions
 * become `ok` through the real upload link and Queue, and its no-code module (E1/E2).
 */
import { vi } from "vitest";
import { upgradeFixtureFiles } from "../../fixtures/terraform-upgrade";
import { type Api, expectStatus, tfe } from "../../support/client";
import { buildTarball } from "../../support/tarball";

export const unique = (prefix: string) => `${prefix}-${crypto.randomUUID().replaceAll("-", "").slice(0, 8)}`;

/** A user with a token. */
export async function createUser(
  api: Api,
  username = unique("user"),
): Promise<{ id: string; username: string; token: string }> {
  const user = await expectStatus(
    tfe(api, "POST", "admin/users", api.adminToken, {
      data: { type: "users", attributes: { username, email: `${username}@example.test` } },
    }),
    201,
    "user",
  );
  const token = await expectStatus(
    tfe(api, "POST", `users/${user.json.data.id}/authentication-tokens`, api.adminToken, {
      data: { type: "authentication-tokens" },
    }),
    201,
    "user token",
  );
  return { id: user.json.data.id, username, token: token.json.data.attributes.token };
}

/** An organization with a user in `owners`. */
export async function createOrg(api: Api, name = unique("org")) {
  const org = await expectStatus(
    tfe(api, "POST", "organizations", api.adminToken, {
      data: { type: "organizations", attributes: { name, email: `admin@${name}.example.test` } },
    }),
    201,
    "organization",
  );
  const owner = await createUser(api);
  const ownersTeamId = org.json.data.relationships["owners-team"].data.id as string;
  await expectStatus(
    tfe(api, "POST", `teams/${ownersTeamId}/relationships/users`, api.adminToken, {
      data: [{ type: "users", id: owner.username }],
    }),
    204,
    "membership",
  );
  return { org: name, owner };
}

/**
 * Publish `files` as `version` of the private module at `moduleAddress` (`<org>/<name>/<provider>`)
 * through its upload link, and wait until the Queue ingested it (`ok`).
 */
export async function publishModuleVersion(
  api: Api,
  token: string,
  moduleAddress: string,
  version: string,
  files: Record<string, string>,
): Promise<void> {
  const [org, name, provider] = moduleAddress.split("/");
  const base = `organizations/${org}/registry-modules/private/${org}/${name}/${provider}`;
  const created = await expectStatus(
    tfe(api, "POST", `${base}/versions`, token, {
      data: { type: "registry-module-versions", attributes: { version } },
    }),
    201,
    "module version",
  );
  const upload = await fetch(created.json.data.links.upload, {
    method: "PUT",
    body: (await buildTarball(files)) as Uint8Array<ArrayBuffer>,
  });
  await upload.text();
  if (upload.status !== 200) throw new Error(`module upload: ${upload.status}`);
  await vi.waitFor(
    async () => {
      const read = await tfe(api, "GET", `${base}/version?module_version=${version}`, token);
      const status = read.json?.data?.attributes?.status;
      if (status === "reg_ingress_failed") throw new Error(`ingestion failed: ${read.json.data.attributes.error}`);
      if (status !== "ok") throw new Error(`version ${version} is ${status}`);
    },
    { timeout: 30_000, interval: 100 },
  );
}

/** Publish a version of the upgrade fixture (provider `random`) and wait until the Queue ingested it. */
export function publish(
  api: Api,
  org: string,
  token: string,
  module: string,
  version: string,
  fixture: "upgrade-v1" | "upgrade-v2",
): Promise<void> {
  return publishModuleVersion(api, token, `${org}/${module}/random`, version, upgradeFixtureFiles(fixture));
}

/** Region options of the no-code module (a drop-down in the form). */
export const REGIONS = ["eu-west-1", "us-east-1", "ap-south-1"];

/** A registry module with 1.0.0 ok, enabled for no-code pinned there, `region` limited to {@link REGIONS}. */
export async function noCodeModule(
  api: Api,
  org: string,
  token: string,
): Promise<{ id: string; name: string; registryModuleId: string }> {
  const name = unique("network");
  const rm = await expectStatus(
    tfe(api, "POST", `organizations/${org}/registry-modules`, token, {
      data: { type: "registry-modules", attributes: { name, provider: "random", "registry-name": "private" } },
    }),
    201,
    "registry module",
  );
  await publish(api, org, token, name, "1.0.0", "upgrade-v1");
  const enabled = await expectStatus(
    tfe(api, "POST", `organizations/${org}/no-code-modules`, token, {
      data: {
        type: "no-code-modules",
        attributes: { enabled: true, "version-pin": "1.0.0" },
        relationships: {
          "registry-module": { data: { type: "registry-modules", id: rm.json.data.id } },
          "variable-options": {
            data: [
              {
                type: "variable-options",
                attributes: { "variable-name": "region", "variable-type": "string", options: REGIONS },
              },
            ],
          },
        },
      },
    }),
    200,
    "E1",
  );
  return { id: enabled.json.data.id, name, registryModuleId: rm.json.data.id };
}

/** E2: move the pin. */
export async function movePin(
  api: Api,
  token: string,
  module: { id: string; registryModuleId: string },
  version: string,
): Promise<void> {
  await expectStatus(
    tfe(api, "PATCH", `no-code-modules/${module.id}`, token, {
      data: {
        type: "no-code-modules",
        attributes: { "version-pin": version },
        relationships: { "registry-module": { data: { type: "registry-modules", id: module.registryModuleId } } },
      },
    }),
    200,
    "E2",
  );
}
