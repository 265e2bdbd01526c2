/**
 * Decision N10 on every registry endpoint, per token kind: registry-module writes need
 * manage-modules (owners, such a user or team, and the organization token); reads need
 * membership; ADMIN_TOKEN and outsiders get 404; no token gets 401 (N2a). The upload
 * link is its own credential (N2a, N9).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { tfe } from "../../../helpers/nocode";
import { buildTarball } from "../../../support/tarball";
import {
  createModule,
  createVersion,
  moduleDoc,
  modulePath,
  type RegistryCallers,
  type RegistryOrg,
  registryOrg,
  uniqueName,
  upload,
  versionDoc,
  versionPath,
} from "./registry-fixtures";

let ctx: RegistryOrg;
/** A module with version 1.0.0, made by the owner, that every caller tries to read. */
let shared: { id: string; name: string };

beforeAll(async () => {
  ctx = await registryOrg();
  shared = await createModule(ctx.org, ctx.tokens.owner);
  await createVersion(ctx.org, shared.name, "1.0.0", ctx.tokens.owner);
});

type Kind = keyof RegistryCallers | "none";

/** What each kind may do with registry modules (N10). */
const RIGHTS: Record<Kind, { read: boolean; write: boolean }> = {
  owner: { read: true, write: true },
  manager: { read: true, write: true },
  managerTeam: { read: true, write: true },
  organization: { read: true, write: true },
  member: { read: true, write: false },
  memberTeam: { read: true, write: false },
  admin: { read: false, write: false },
  outsider: { read: false, write: false },
  none: { read: false, write: false },
};

const KINDS = Object.keys(RIGHTS) as Kind[];

describe.each(KINDS)("with a %s token", (kind) => {
  const token = () => (kind === "none" ? null : ctx.tokens[kind]);
  const denied = kind === "none" ? 401 : 404;
  const { read, write } = RIGHTS[kind];
  const deniedBody =
    kind === "none"
      ? { errors: [{ status: "401", title: "unauthorized" }] }
      : { errors: [{ status: "404", title: "not found" }] };

  it(`creates a module: ${write ? 201 : denied}`, async () => {
    const name = uniqueName("perm");
    const res = await tfe("POST", `organizations/${ctx.org}/registry-modules`, {
      token: token(),
      body: moduleDoc(name),
    });
    expect(res.status).toBe(write ? 201 : denied);
    if (!write) {
      expect(res.json).toEqual(deniedBody);
      expect((await tfe("GET", modulePath(ctx.org, name), { token: ctx.tokens.owner })).status).toBe(404);
    }
  });

  it(`lists modules: ${read ? 200 : denied}`, async () => {
    const res = await tfe("GET", `organizations/${ctx.org}/registry-modules`, { token: token() });
    expect(res.status).toBe(read ? 200 : denied);
    if (read) expect(res.json.data.map((m: { id: string }) => m.id)).toContain(shared.id);
    else expect(res.json).toEqual(deniedBody);
  });

  it(`reads a module by id: ${read ? 200 : denied}`, async () => {
    const res = await tfe("GET", `registry-modules/${shared.id}`, { token: token() });
    expect(res.status).toBe(read ? 200 : denied);
    if (read) expect(res.json.data.attributes.permissions["can-delete"]).toBe(write);
    else expect(res.json).toEqual(deniedBody);
  });

  it(`reads a module by address: ${read ? 200 : denied}`, async () => {
    const res = await tfe("GET", modulePath(ctx.org, shared.name), { token: token() });
    expect(res.status).toBe(read ? 200 : denied);
    if (read) expect(res.json.data.id).toBe(shared.id);
  });

  it(`deletes a module: ${write ? 204 : denied}`, async () => {
    const { name } = await createModule(ctx.org, ctx.tokens.owner);
    const res = await tfe("DELETE", modulePath(ctx.org, name), { token: token() });
    expect(res.status).toBe(write ? 204 : denied);
    const after = await tfe("GET", modulePath(ctx.org, name), { token: ctx.tokens.owner });
    expect(after.status).toBe(write ? 404 : 200);
  });

  it(`creates a version: ${write ? 201 : denied}, on the current and the deprecated path`, async () => {
    const { name } = await createModule(ctx.org, ctx.tokens.owner);
    const res = await tfe("POST", `${modulePath(ctx.org, name)}/versions`, {
      token: token(),
      body: versionDoc("0.1.0"),
    });
    expect(res.status).toBe(write ? 201 : denied);
    const old = await tfe("POST", `registry-modules/${ctx.org}/${name}/aws/versions`, {
      token: token(),
      body: versionDoc("0.2.0"),
    });
    expect(old.status).toBe(write ? 201 : denied);
    const statuses = (await tfe("GET", modulePath(ctx.org, name), { token: ctx.tokens.owner })).json.data.attributes[
      "version-statuses"
    ];
    expect(statuses.map((s: { version: string }) => s.version)).toEqual(write ? ["0.2.0", "0.1.0"] : []);
  });

  it(`reads a version: ${read ? 200 : denied}`, async () => {
    const res = await tfe("GET", versionPath(ctx.org, shared.name, "1.0.0"), { token: token() });
    expect(res.status).toBe(read ? 200 : denied);
    if (read) expect(res.json.data.attributes.version).toBe("1.0.0");
    else expect(res.json).toEqual(deniedBody);
  });
});

describe("the upload link is its own credential (N2a, N9)", () => {
  it("needs no token, ignores any Authorization header, and is not the API's 401", async () => {
    const { name } = await createModule(ctx.org, ctx.tokens.owner);
    const v1 = await createVersion(ctx.org, name, "1.0.0", ctx.tokens.owner);
    const v2 = await createVersion(ctx.org, name, "2.0.0", ctx.tokens.owner);
    const tarball = await buildTarball({ "main.tf": 'resource "null_resource" "x" {}\n' });
    expect((await upload(v1.upload, tarball)).status).toBe(200);
    expect((await upload(v2.upload, tarball, { Authorization: "Bearer not-a-token" })).status).toBe(200);
    // Without a token, a made-up link is 404 (not 401), as is any other method on a link.
    expect((await tfe("PUT", `uploads/${"A".repeat(43)}`, { token: null, rawBody: tarball })).status).toBe(404);
    expect((await tfe("GET", `uploads/${"A".repeat(43)}`, { token: null })).status).toBe(404);
    // Other /api/v2 paths still need a token.
    expect((await tfe("GET", `registry-modules/${shared.id}`, { token: null })).status).toBe(401);
  });
});
