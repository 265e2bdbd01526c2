/**
 * Decision B9 on the /api/v2 request path: version
 * constraints are at most 256 characters and parsed in linear time; `hcl: true` values
 * nest at most 100 deep (422 with a pointer); `page[number]` is at most 100,000 (400).
 * Each answered 500, or took minutes, before.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { tfe, uniqueName } from "../../helpers/nocode";
import {
  createNoCodeWorkspace,
  type NoCodeOrg,
  noCodeOrg,
  provisionWorkspace,
  varEntry,
  workspaceDoc,
} from "../../helpers/nocode-modules";
import { e5 } from "./upgrade/upgrade-helpers";

let ctx: NoCodeOrg;
beforeAll(async () => {
  ctx = await noCodeOrg();
});

const deep = (n: number) => `${"[".repeat(n)}1${"]".repeat(n)}`;

describe("engine-version constraints (B9)", () => {
  it("`1.0,` + a million spaces + `x` → 422 at once, and nothing is created", async () => {
    const name = uniqueName("ws");
    const res = await provisionWorkspace(
      ctx.noCodeModuleId,
      ctx.ownerToken,
      workspaceDoc({ name, "engine-version": `1.0,${" ".repeat(1_000_000)}x` }, [varEntry("prefix", "pet")]),
    );
    expect(res.status).toBe(422);
    expect(res.json.errors[0]).toMatchObject({
      detail: "Engine version is longer than 256 characters",
      source: { pointer: "/data/attributes/engine-version" },
    });
    expect((await tfe("GET", `organizations/${ctx.org}/workspaces/${name}`, { token: ctx.ownerToken })).status).toBe(
      404,
    );
  });

  it("257 characters → 422; a constraint with spaces around its terms still resolves", async () => {
    const long = await provisionWorkspace(
      ctx.noCodeModuleId,
      ctx.ownerToken,
      workspaceDoc({ name: uniqueName("ws"), "terraform-version": `>= 1.0${" ".repeat(251)}` }, [
        varEntry("prefix", "pet"),
      ]),
    );
    expect(long.status).toBe(422);
    expect(long.json.errors[0].detail).toBe("Engine version is longer than 256 characters");
    const spaced = await provisionWorkspace(
      ctx.noCodeModuleId,
      ctx.ownerToken,
      workspaceDoc({ name: uniqueName("ws"), "engine-version": "  >=  1.0 ,   < 99  " }, [varEntry("prefix", "pet")]),
    );
    expect(spaced.status).toBe(200);
  });
});

describe("`hcl: true` values nest at most 100 deep (B9)", () => {
  it("E4: 20,000 deep → 422 with the var's pointer; 100 deep is accepted", async () => {
    const res = await provisionWorkspace(
      ctx.noCodeModuleId,
      ctx.ownerToken,
      workspaceDoc({ name: uniqueName("ws") }, [
        varEntry("prefix", "pet"),
        varEntry("extra", deep(20_000), { hcl: true }),
      ]),
    );
    expect(res.status).toBe(422);
    expect(res.json.errors[0]).toMatchObject({
      status: "422",
      detail: "Value nests more than 100 levels deep (the limit of HCL values)",
      source: { pointer: "/data/relationships/vars/data/1/attributes/value" },
    });
    // The same text without `hcl` is a plain string; 100 deep with `hcl` is fine.
    const plain = await provisionWorkspace(
      ctx.noCodeModuleId,
      ctx.ownerToken,
      workspaceDoc({ name: uniqueName("ws") }, [varEntry("prefix", "pet"), varEntry("extra", deep(20_000))]),
    );
    expect(plain.status).toBe(200);
    const ok = await provisionWorkspace(
      ctx.noCodeModuleId,
      ctx.ownerToken,
      workspaceDoc({ name: uniqueName("ws") }, [
        varEntry("prefix", "pet"),
        varEntry("extra", deep(100), { hcl: true }),
      ]),
    );
    expect(ok.status).toBe(200);
  });

  it("workspace vars: POST and PATCH → 422 with a pointer, also when only `hcl` changes", async () => {
    const { workspace } = await createNoCodeWorkspace(ctx.noCodeModuleId, ctx.ownerToken);
    const post = await tfe("POST", `workspaces/${workspace.id}/vars`, {
      token: ctx.ownerToken,
      body: { data: { type: "vars", attributes: { key: "deep", value: deep(20_000), category: "engine", hcl: true } } },
    });
    expect(post.status).toBe(422);
    expect(post.json.errors[0].source).toEqual({ pointer: "/data/attributes/value" });

    const created = await tfe("POST", `workspaces/${workspace.id}/vars`, {
      token: ctx.ownerToken,
      body: { data: { type: "vars", attributes: { key: "deep", value: deep(20_000), category: "engine" } } },
    });
    expect(created.status).toBe(201);
    const varPath = `workspaces/${workspace.id}/vars/${created.json.data.id}`;
    const toHcl = await tfe("PATCH", varPath, {
      token: ctx.ownerToken,
      body: { data: { type: "vars", attributes: { hcl: true } } },
    });
    expect(toHcl.status).toBe(422);
    expect(toHcl.json.errors[0].source).toEqual({ pointer: "/data/attributes/value" });
    expect(
      (
        await tfe("PATCH", varPath, {
          token: ctx.ownerToken,
          body: { data: { type: "vars", attributes: { hcl: true, value: deep(3) } } },
        })
      ).status,
    ).toBe(200);
    const deeper = await tfe("PATCH", varPath, {
      token: ctx.ownerToken,
      body: { data: { type: "vars", attributes: { value: deep(101) } } },
    });
    expect(deeper.status).toBe(422);
    expect(deeper.json.errors[0].source).toEqual({ pointer: "/data/attributes/value" });
  });

  it("E5: 20,000 deep → 422 with the var's pointer", async () => {
    const { workspace } = await createNoCodeWorkspace(ctx.noCodeModuleId, ctx.ownerToken);
    const res = await e5(ctx.noCodeModuleId, workspace.id, ctx.ownerToken, [
      varEntry("extra", deep(20_000), { hcl: true }),
    ]);
    expect(res.status).toBe(422);
    expect(res.json.errors[0].source).toEqual({ pointer: "/data/relationships/vars/data/0/attributes/value" });
  });
});

describe("page[number] (B9)", () => {
  it.each(["organizations/ORG/teams", "organizations/ORG/projects", "organizations/ORG/registry-modules"])(
    "%s: above 100,000 → 400; 100,000 → 200",
    async (path) => {
      const url = path.replace("ORG", ctx.org);
      for (const n of ["100001", "1000000000000000000000", "99999999999999999999999999999999999999"]) {
        const res = await tfe("GET", `${url}?page[number]=${n}`, { token: ctx.ownerToken });
        expect(res.status, n).toBe(400);
        expect(res.json.errors[0].detail).toBe("page[number] must be at most 100000");
      }
      expect((await tfe("GET", `${url}?page[number]=100000`, { token: ctx.ownerToken })).status).toBe(200);
    },
  );
});
