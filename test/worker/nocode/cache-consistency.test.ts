/**
 * The consistency rule of the /api/v2 per-isolate cache (src/nocode/cache.ts; decisions
 * N13, docs/performance.md): an authenticated write clears the cache AFTER it ran — not before — and
 * a route that declares `rights(…, { cache: "unchanged" })` (src/nocode/route-rights.ts)
 * keeps it. That declaration is a security claim (a revocation or a permission change must
 * reach this isolate at once), so this file proves it for the whole class:
 * - every cached kind's loader reads only the tables NOCODE_CACHE_ENTRIES lists for it
 *   (each kind is loaded on an empty cache through a D1 binding that records its SQL);
 * - every route declaring "unchanged" is exercised on its success path with the SQL the
 *   Worker sends recorded (the D1 guard's `recordD1Statements`, real D1), and none of its
 *   INSERT/UPDATE/DELETE statements touches a cached table; a declared route this file
 *   does not exercise fails the test;
 * - the cache really is kept by those routes and cleared by every other write, and
 *   revocations made through the API apply at once.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { createDb } from "../../../src/db/client";
import { guardEnv, recordD1Statements } from "../../../src/db/d1-guard";
import { hashNocodeToken, resolveStoredToken } from "../../../src/nocode/access/auth";
import { orgCallerPermissions } from "../../../src/nocode/access/permissions";
import { nocodeApp } from "../../../src/nocode/app";
import {
  cachedNocode,
  clearNocodeCache,
  NOCODE_CACHE_ENTRIES,
  NOCODE_CACHED_TABLES,
  type NocodeCacheKind,
} from "../../../src/nocode/cache";
import { cachedNoCodeModuleWithOptions, cachedPinnedVersion } from "../../../src/nocode/no-code-modules/cached";
import { cachedWorkspaceProjectId } from "../../../src/nocode/projects/cached";
import { cachedReleases } from "../../../src/nocode/releases/cached";
import { cacheEffectOf } from "../../../src/nocode/route-rights";
import { summaryOfVersion } from "../../../src/nocode/runs/configuration";
import { fixtureFiles } from "../../fixtures/terraform";
import {
  addTeamMembers,
  createMember,
  createTeam,
  createTeamToken,
  createUser,
  tfe,
  uniqueName,
} from "../../helpers/nocode";
import {
  createNoCodeWorkspace,
  createPendingVersion,
  createRegistryModule,
  type NoCodeOrg,
  noCodeOrg,
  optionEntry,
  PET_FIXTURE,
  provisionWorkspace,
  uploadVersion,
  varEntry,
  waitForRun,
  workspaceDoc,
} from "../../helpers/nocode-modules";
import { e5, e7, UPGRADE_TEST_TIMEOUT, upgradeReady, waitForUpgrade } from "./upgrade/upgrade-helpers";

/** The tables a statement reads (FROM and JOIN targets). */
function tablesRead(sql: string): string[] {
  return [...sql.matchAll(/\b(?:from|join)\s+"?([A-Za-z_][A-Za-z0-9_]*)"?/gi)].map((m) => (m[1] ?? "").toLowerCase());
}

/** The table an INSERT, UPDATE or DELETE writes; null for any other statement. Throws when a write's target cannot be told. */
function tableWritten(sql: string): string | null {
  const text = sql.trim();
  if (!/^(insert|update|delete|replace|with)\b/i.test(text)) return null;
  const m =
    /^(?:insert(?:\s+or\s+\w+)?\s+into|replace\s+into|update(?:\s+or\s+\w+)?|delete\s+from)\s+"?([A-Za-z_][A-Za-z0-9_]*)"?/i.exec(
      text,
    );
  if (!m?.[1]) throw new Error(`cannot tell which table this write touches: ${text.slice(0, 200)}`);
  return m[1].toLowerCase();
}

/**
 * N13's last-used-at record: the token check of EVERY request (GETs too, which never
 * clear) updates it in `waitUntil`, at most once a minute per token. It is no part of a
 * route's writes, and the one cached field it changes (`lastUsedAt`) is kept right by
 * access/auth.ts's own memory of the writes it made (recordUse). Exactly this statement is allowed.
 */
const LAST_USED_WRITE =
  /^update "nocode_tokens" set "last_used_at" = \? where \("nocode_tokens"\."id" = \? and \("nocode_tokens"\."last_used_at" is null or "nocode_tokens"\."last_used_at" <= \?\)\)$/;

/** A D1 binding over the real one that records the SQL of every statement prepared on it. */
function recordingD1(statements: string[]): D1Database {
  const real = guardEnv(env).DB;
  const wrapper = {
    prepare(sql: string) {
      statements.push(sql);
      return real.prepare(sql);
    },
    batch: (s: D1PreparedStatement[]) => real.batch(s),
    exec: (sql: string) => real.exec(sql),
    dump: () => real.dump(),
    withSession: (c?: string) => real.withSession(c),
  };
  return wrapper as unknown as D1Database;
}

/** Every route of the no-code app that declares `cache: "unchanged"`, as `METHOD /api/v2/path`. */
function declaredUnchanged(): Set<string> {
  const out = new Set<string>();
  for (const r of nocodeApp.routes) {
    if (r.method === "ALL") continue;
    if (cacheEffectOf(r.handler) === "unchanged") out.add(`${r.method} /api/v2${r.path}`);
  }
  return out;
}

/** A cache entry no route can load; answers whether it is still there. */
async function sentinel(): Promise<() => Promise<boolean>> {
  const key = `module:cache-consistency-sentinel-${crypto.randomUUID()}` as const;
  await cachedNocode(key, async () => "kept");
  return async () => (await cachedNocode(key, async () => "reloaded")) === "kept";
}

let ctx: NoCodeOrg;
beforeAll(async () => {
  ctx = await noCodeOrg({ options: [optionEntry("prefix", ["pet", "cat", "dog"])] });
}, UPGRADE_TEST_TIMEOUT);

describe("cached loaders read only the tables NOCODE_CACHE_ENTRIES lists", () => {
  it("each kind, loaded on an empty cache, reads exactly its listed tables", async () => {
    const member = await createMember(ctx.org, { "manage-workspaces": true });
    const teamToken = await createTeamToken(member.teamId);
    const teamHash = await hashNocodeToken(env, teamToken);
    // Every kind must be loaded here: a new kind in NOCODE_CACHE_ENTRIES fails typecheck until it is.
    const loaders: Record<NocodeCacheKind, (db: D1Database) => Promise<unknown>> = {
      token: async (DB) => {
        expect(await resolveStoredToken({ DB }, await hashNocodeToken(env, member.token))).toMatchObject({
          kind: "user",
        });
        expect(await resolveStoredToken({ DB }, teamHash)).toMatchObject({ kind: "team" });
      },
      perm: async (DB) => {
        const db = createDb(DB);
        expect(
          (await orgCallerPermissions(db, { kind: "user", userId: member.id, username: member.username }, ctx.org)).has(
            "run-workspaces",
          ),
        ).toBe(true);
        expect(
          (await orgCallerPermissions(db, { kind: "team", teamId: member.teamId, organization: ctx.org }, ctx.org)).has(
            "run-workspaces",
          ),
        ).toBe(true);
      },
      module: async (DB) => {
        const found = await cachedNoCodeModuleWithOptions(createDb(DB), ctx.noCodeModuleId);
        expect(found?.sets.map((s) => s.variableName)).toEqual(["prefix"]);
      },
      releases: async (DB) => {
        expect((await cachedReleases(createDb(DB))).length).toBeGreaterThan(0);
      },
      pin: async (DB) => {
        const pinned = await cachedPinnedVersion(createDb(DB), {
          registryModuleId: ctx.registryModule.id,
          versionPin: ctx.version,
        });
        expect(pinned.version?.id).toBe(ctx.versionId);
      },
      summary: async (DB) => {
        expect((await summaryOfVersion(createDb(DB), ctx.versionId)).variables.map((v) => v.name)).toContain("prefix");
      },
      project: async (DB) => {
        const db = createDb(DB);
        expect(await cachedWorkspaceProjectId(db, ctx.org, undefined)).toBe(ctx.defaultProjectId);
        expect(await cachedWorkspaceProjectId(db, ctx.org, ctx.defaultProjectId)).toBe(ctx.defaultProjectId);
      },
    };
    for (const [kind, load] of Object.entries(loaders) as [NocodeCacheKind, (db: D1Database) => Promise<unknown>][]) {
      clearNocodeCache();
      const statements: string[] = [];
      await load(recordingD1(statements));
      expect(statements.length, kind).toBeGreaterThan(0);
      const read = new Set(statements.flatMap(tablesRead));
      expect([...read].sort(), `tables the ${kind} loader reads`).toEqual([...NOCODE_CACHE_ENTRIES[kind]].sort());
      for (const sql of statements) expect(tableWritten(sql), `the ${kind} loader writes: ${sql}`).toBeNull();
    }
    clearNocodeCache();
  });
});

describe('routes declaring cache: "unchanged" write no cached table', () => {
  it(
    "every such route, on its success path, sends no INSERT/UPDATE/DELETE to a cached table",
    async () => {
      const upgrade = await upgradeReady();
      const token = ctx.ownerToken;
      const { workspace, runId } = await createNoCodeWorkspace(ctx.noCodeModuleId, token);
      await waitForRun(runId, token, ["planned"]);
      const other = await createNoCodeWorkspace(ctx.noCodeModuleId, token);
      await waitForRun(other.runId, token, ["planned"]);
      // N19a: two runs put back into a running status (a cancel's and a force-cancel's success paths).
      const running = await createNoCodeWorkspace(ctx.noCodeModuleId, token);
      const stuck = await createNoCodeWorkspace(ctx.noCodeModuleId, token);
      await waitForRun(running.runId, token, ["planned"]);
      await waitForRun(stuck.runId, token, ["planned"]);
      await env.DB.batch([
        env.DB.prepare("UPDATE runs SET status = 'planning' WHERE id = ?").bind(running.runId),
        env.DB.prepare("UPDATE runs SET status = 'applying', cancel_requested_at = ? WHERE id = ?").bind(
          Date.now() - 3600_000,
          stuck.runId,
        ),
      ]);
      let varId = "";
      let upgradeRunId = "";

      /** Each declared route's request, and a table its success must write (so the recording is not vacuous). */
      const cases: Record<
        string,
        { writes: string; send: () => Promise<{ status: number; text: string }>; expected: number }
      > = {
        "POST /api/v2/no-code-modules/:id/workspaces": {
          writes: "workspaces",
          expected: 200,
          send: () =>
            provisionWorkspace(
              ctx.noCodeModuleId,
              token,
              workspaceDoc({ name: uniqueName("ws") }, [varEntry("prefix", "cat")]),
            ),
        },
        "POST /api/v2/workspaces/:id/vars": {
          writes: "workspace_vars",
          expected: 201,
          send: async () => {
            const res = await tfe("POST", `workspaces/${workspace.id}/vars`, {
              token,
              body: { data: { type: "vars", attributes: { key: "note", value: "a", category: "env" } } },
            });
            varId = res.json?.data?.id ?? "";
            return res;
          },
        },
        "PATCH /api/v2/workspaces/:id/vars/:var_id": {
          writes: "workspace_vars",
          expected: 200,
          send: () =>
            tfe("PATCH", `workspaces/${workspace.id}/vars/${varId}`, {
              token,
              body: { data: { type: "vars", id: varId, attributes: { value: "b" } } },
            }),
        },
        "DELETE /api/v2/workspaces/:id/vars/:var_id": {
          writes: "workspace_vars",
          expected: 204,
          send: () => tfe("DELETE", `workspaces/${workspace.id}/vars/${varId}`, { token }),
        },
        "POST /api/v2/runs/:id/actions/apply": {
          writes: "runs",
          expected: 202,
          send: () => tfe("POST", `runs/${runId}/actions/apply`, { token }),
        },
        "POST /api/v2/runs/:id/actions/discard": {
          writes: "runs",
          expected: 202,
          send: () => tfe("POST", `runs/${other.runId}/actions/discard`, { token }),
        },
        "POST /api/v2/runs/:id/actions/cancel": {
          writes: "runs",
          expected: 202,
          send: () => tfe("POST", `runs/${running.runId}/actions/cancel`, { token }),
        },
        "POST /api/v2/runs/:id/actions/force-cancel": {
          writes: "runs",
          expected: 202,
          send: () => tfe("POST", `runs/${stuck.runId}/actions/force-cancel`, { token }),
        },
        "POST /api/v2/no-code-modules/:id/workspaces/:workspace_id/upgrade": {
          writes: "runs",
          expected: 200,
          send: async () => {
            const res = await e5(upgrade.noCodeModuleId, upgrade.workspaceId, upgrade.ownerToken);
            upgradeRunId = res.json?.data?.id ?? "";
            if (upgradeRunId)
              await waitForUpgrade(upgrade.noCodeModuleId, upgrade.workspaceId, upgradeRunId, upgrade.ownerToken, [
                "planned",
              ]);
            return res;
          },
        },
        "POST /api/v2/no-code-modules/:id/workspaces/:workspace_id/upgrade/:run_id": {
          writes: "workspaces",
          expected: 200,
          send: () => e7(upgrade.noCodeModuleId, upgrade.workspaceId, upgradeRunId, upgrade.ownerToken),
        },
        // N20 locks and the recovery upload, on the workspace whose run was discarded above (no run holds its lock).
        "POST /api/v2/workspaces/:id/actions/lock": {
          writes: "workspaces",
          expected: 200,
          send: () => tfe("POST", `workspaces/${other.workspace.id}/actions/lock`, { token }),
        },
        "POST /api/v2/workspaces/:id/actions/unlock": {
          writes: "workspaces",
          expected: 200,
          send: () => tfe("POST", `workspaces/${other.workspace.id}/actions/unlock`, { token }),
        },
        "POST /api/v2/workspaces/:id/state-versions": {
          writes: "state_versions",
          expected: 201,
          send: async () => {
            await tfe("POST", `workspaces/${other.workspace.id}/actions/lock`, { token });
            const bytes = new TextEncoder().encode(
              JSON.stringify({ version: 4, serial: 1, lineage: "cc", outputs: {} }),
            );
            const md5 = [...new Uint8Array(await crypto.subtle.digest("MD5", bytes))]
              .map((b) => b.toString(16).padStart(2, "0"))
              .join("");
            return tfe("POST", `workspaces/${other.workspace.id}/state-versions`, {
              token,
              body: {
                data: {
                  type: "state-versions",
                  attributes: { serial: 1, lineage: "cc", md5, state: btoa(String.fromCharCode(...bytes)) },
                },
              },
            });
          },
        },
        "POST /api/v2/workspaces/:id/actions/force-unlock": {
          writes: "workspaces",
          expected: 200,
          send: () => tfe("POST", `workspaces/${other.workspace.id}/actions/force-unlock`, { token }),
        },
      };
      expect(new Set(Object.keys(cases)), 'routes declaring cache: "unchanged" (each needs a case here)').toEqual(
        declaredUnchanged(),
      );

      for (const [route, c] of Object.entries(cases)) {
        const recording = recordD1Statements();
        let res: { status: number; text: string };
        try {
          res = await c.send();
        } finally {
          recording.stop();
        }
        expect(res.status, `${route}: ${res.text}`).toBe(c.expected);
        const written = recording.statements.filter((sql) => !LAST_USED_WRITE.test(sql)).map(tableWritten);
        expect(written, `${route} writes ${c.writes}`).toContain(c.writes);
        const cachedWrites = recording.statements.filter(
          (sql) => !LAST_USED_WRITE.test(sql) && NOCODE_CACHED_TABLES.has(tableWritten(sql) ?? ""),
        );
        expect(cachedWrites, `${route} writes a cached table`).toEqual([]);
      }
    },
    UPGRADE_TEST_TIMEOUT,
  );

  it("the table parser sees the writes that matter (the check above cannot pass by misreading SQL)", () => {
    expect(tableWritten('insert into "nocode_tokens" ("id") values (?)')).toBe("nocode_tokens");
    expect(tableWritten('update "team_memberships" set "x" = ?')).toBe("team_memberships");
    expect(tableWritten('delete from "variable_options" where "id" = ?')).toBe("variable_options");
    expect(tableWritten('insert or replace into "teams" ("id") values (?)')).toBe("teams");
    expect(tableWritten('select "id" from "teams"')).toBeNull();
    expect(() => tableWritten("with x as (select 1) insert into teams select * from x")).toThrow();
    expect(LAST_USED_WRITE.test('update "nocode_tokens" set "expired_at" = ? where ("nocode_tokens"."id" = ?)')).toBe(
      false,
    );
  });
});

describe("clearing after writes, not before", () => {
  it('a route declaring cache: "unchanged" keeps the cache; a failed one too; any other write clears it', async () => {
    const token = ctx.ownerToken;
    let present = await sentinel();
    expect(
      (
        await provisionWorkspace(
          ctx.noCodeModuleId,
          token,
          workspaceDoc({ name: uniqueName("ws") }, [varEntry("prefix", "pet")]),
        )
      ).status,
    ).toBe(200);
    expect(await present()).toBe(true);
    // 422 (a value outside the module's options): still nothing cached changed.
    expect(
      (
        await provisionWorkspace(
          ctx.noCodeModuleId,
          token,
          workspaceDoc({ name: uniqueName("ws") }, [varEntry("prefix", "cow")]),
        )
      ).status,
    ).toBe(422);
    expect(await present()).toBe(true);
    // A default write (a project) clears everything after it ran.
    const project = await tfe("POST", `organizations/${ctx.org}/projects`, {
      token,
      body: { data: { type: "projects", attributes: { name: uniqueName("p") } } },
    });
    expect(project.status, project.text).toBe(201);
    expect(await present()).toBe(false);
    // A refused write of a default route clears too (whatever it may have done before failing).
    present = await sentinel();
    expect(
      (await tfe("POST", `organizations/${ctx.org}/projects`, { token, body: { data: { type: "nope" } } })).status,
    ).toBeGreaterThanOrEqual(400);
    expect(await present()).toBe(false);
  });

  it("a team token primed by cache-keeping E4s is refused at once after its revocation through the API", async () => {
    const teamId = await createTeam(ctx.org, { "manage-workspaces": true });
    const teamToken = await createTeamToken(teamId);
    const create = () =>
      provisionWorkspace(
        ctx.noCodeModuleId,
        teamToken,
        workspaceDoc({ name: uniqueName("ws") }, [varEntry("prefix", "dog")]),
      );
    expect((await create()).status).toBe(200);
    expect((await create()).status).toBe(200); // served from the cache E4 kept
    expect((await tfe("DELETE", `teams/${teamId}/authentication-token`, { token: ctx.ownerToken })).status).toBe(204);
    expect((await create()).status).toBe(401);
  });

  it("a user token that deletes itself (a write made with a cached token) is refused on its next use", async () => {
    const user = await createUser();
    const teamId = await createTeam(ctx.org, { "manage-workspaces": true });
    await addTeamMembers(teamId, [user.username]);
    const minted = await tfe("POST", `users/${user.id}/authentication-tokens`, {
      token: user.token,
      body: { data: { type: "authentication-tokens" } },
    });
    expect(minted.status, minted.text).toBe(201);
    const own = minted.json.data.attributes.token as string;
    expect((await tfe("GET", `organizations/${ctx.org}`, { token: own })).status).toBe(200); // cached now
    expect((await tfe("DELETE", `authentication-tokens/${minted.json.data.id}`, { token: own })).status).toBe(204);
    expect((await tfe("GET", `organizations/${ctx.org}`, { token: own })).status).toBe(401);
  });

  it("a member removed from its team loses E4 at once, though E4 keeps the cache", async () => {
    const member = await createMember(ctx.org, { "manage-workspaces": true });
    const create = () =>
      provisionWorkspace(
        ctx.noCodeModuleId,
        member.token,
        workspaceDoc({ name: uniqueName("ws") }, [varEntry("prefix", "pet")]),
      );
    expect((await create()).status).toBe(200);
    const body = { data: [{ type: "users", id: member.username }] };
    expect(
      (await tfe("DELETE", `teams/${member.teamId}/relationships/users`, { token: ctx.ownerToken, body })).status,
    ).toBe(204);
    expect((await create()).status).toBe(404);
  });

  it("E4 reads the release list from the cache, and sees this isolate's release writes at once", async () => {
    const version = `7.${Math.floor(Math.random() * 1000)}.${Math.floor(Math.random() * 1000)}`;
    const create = () =>
      provisionWorkspace(
        ctx.noCodeModuleId,
        ctx.ownerToken,
        workspaceDoc({ name: uniqueName("ws"), "terraform-version": version }, [varEntry("prefix", "pet")]),
      );
    expect((await create()).status).toBe(422); // unknown release; the list is cached now
    const added = await tfe("POST", "admin/terraform-versions", {
      body: { data: { type: "terraform-versions", attributes: { version } } },
    });
    expect(added.status, added.text).toBe(201);
    expect((await create()).status).toBe(200);
    const disabled = await tfe("PATCH", `admin/terraform-versions/${added.json.data.id}`, {
      body: { data: { type: "terraform-versions", attributes: { enabled: false } } },
    });
    expect(disabled.status, disabled.text).toBe(200);
    const refused = await create();
    expect(refused.status).toBe(422);
    expect(refused.json.errors[0].detail).toMatch(/disabled/);
  });

  it("a pin's version is kept only once it is ok: a pending version that becomes ok is provisionable at once", async () => {
    const module = await createRegistryModule(ctx.org, ctx.ownerToken);
    const pending = await createPendingVersion(ctx.org, module, "1.0.0", ctx.ownerToken);
    const pin = { registryModuleId: module.id, versionPin: "1.0.0" };
    const statements: string[] = [];
    const db = createDb(recordingD1(statements));
    expect((await cachedPinnedVersion(db, pin)).summary).toBeNull(); // pending: read, not kept
    // The upload is unauthenticated and ingestion runs on the Queue: neither clears the cache.
    expect(
      (await uploadVersion(ctx.org, module, "1.0.0", pending.upload, ctx.ownerToken, fixtureFiles(PET_FIXTURE))).status,
    ).toBe("ok");
    const before = statements.length;
    const ok = await cachedPinnedVersion(db, pin);
    expect(ok.version?.status).toBe("ok");
    expect(ok.summary?.variables.map((v) => v.name)).toContain("prefix");
    expect(statements.length).toBeGreaterThan(before);
    const kept = statements.length;
    expect(await cachedPinnedVersion(db, pin)).toBe(ok); // ok: kept, no D1 read
    expect(statements.length).toBe(kept);
  });

  it("E4 reads the module from the cache E3 fills, and sees this isolate's E2 at once", async () => {
    const local = await noCodeOrg();
    const create = () =>
      provisionWorkspace(
        local.noCodeModuleId,
        local.ownerToken,
        workspaceDoc({ name: uniqueName("ws") }, [varEntry("prefix", "pet")]),
      );
    expect((await tfe("GET", `no-code-modules/${local.noCodeModuleId}`, { token: local.ownerToken })).status).toBe(200);
    expect((await create()).status).toBe(200);
    const patched = await tfe("PATCH", `no-code-modules/${local.noCodeModuleId}`, {
      token: local.ownerToken,
      body: { data: { type: "no-code-modules", attributes: { enabled: false } } },
    });
    expect(patched.status, patched.text).toBe(200);
    const refused = await create();
    expect(refused.status, refused.text).toBe(422);
    expect(refused.json.errors[0].detail).toMatch(/not enabled/);
    expect((await tfe("DELETE", `no-code-modules/${local.noCodeModuleId}`, { token: local.ownerToken })).status).toBe(
      204,
    );
    expect((await create()).status).toBe(404);
  });
});
