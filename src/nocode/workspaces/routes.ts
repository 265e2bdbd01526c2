/**
 * Workspaces created from no-code modules (seed E4; decisions N5, N6, N9, N10):
 * `POST /no-code-modules/:id/workspaces` (200), `GET /workspaces/:id`,
 * `GET /organizations/:org/workspaces/:name`, the workspace's vars
 * (`GET|POST /workspaces/:id/vars`, `PATCH|DELETE /workspaces/:id/vars/:var_id`) and its
 * runs (`GET /workspaces/:id/runs`, N7).
 * E4 needs `manage-workspaces` and refuses the organization token; var writes need
 * `manage-workspaces` (the organization token may); reads need `read-workspaces`.
 * Not permitted → 404.
 */
import { Hono } from "hono";
import type { Db } from "../../db/client";
import { insertUnique } from "../../db/unique";
import type { ModuleSummary } from "../../lib/terraform/types";
import type { NocodeEnv } from "../env";
import { NocodeError, notFound, unprocessable } from "../errors";
import { findNoCodeModule, listVariableOptions, type VariableOptionSet } from "../no-code-modules/repo";
import { findModuleVersionById, versionSummary } from "../registry/repo";
import { operation } from "../request/operation";
import { pageQuery, pageRequest } from "../request/query";
import { jsonApi, jsonApiPage, noContent } from "../respond";
import { rights, scope } from "../route-rights";
import { forceCancelAfterMs } from "../runs/cancel";
import { workspaceRunsPage } from "../runs/repo";
import { runResource } from "../runs/serialize";
import { provisionableModule, provisionWorkspace } from "./create";
import { workspaceDocument, workspaceInputOf } from "./input";
import { loadWorkspaceResource, provisionedWorkspaceResource } from "./load";
import {
  deleteWorkspaceVarQuery,
  findWorkspace,
  findWorkspaceByName,
  findWorkspaceVar,
  insertWorkspaceVarQuery,
  listWorkspaceVars,
  updateWorkspaceVarQuery,
  type WorkspaceRow,
  type WorkspaceVarRow,
} from "./repo";
import { runListAnswer, varDocumentAnswer, varListAnswer, workspaceDocumentAnswer } from "./serialize";
import {
  checkRequiredVars,
  checkVarOptions,
  hclValueTooDeepError,
  newVarRow,
  newVarVersionId,
  reservedEnvName,
  reservedEnvNameError,
  storedValue,
  varCreateDocument,
  varInputOf,
  varResource,
  varUpdateDocument,
  varValueTooDeep,
} from "./vars";

/** The workspace `:id` (its organization's rights decide). */
const workspaceById = scope(async (c) => {
  const ws = await findWorkspace(c.var.db, c.req.param("id") ?? "");
  return ws && { resource: ws, organization: ws.organization };
});

/** The module rules a workspace's vars follow (N5): its version's variables and the module's options. */
async function moduleRules(
  db: Db,
  ws: WorkspaceRow,
): Promise<{ summary: ModuleSummary | null; options: VariableOptionSet[] }> {
  const version = ws.noCodeVersionId ? await findModuleVersionById(db, ws.noCodeVersionId) : undefined;
  const module = ws.noCodeModuleId ? await findNoCodeModule(db, ws.noCodeModuleId) : undefined;
  return {
    summary: version ? versionSummary(version) : null,
    options: module ? await listVariableOptions(db, module.id) : [],
  };
}

const keyTaken = () => new NocodeError("invalid_attribute", "Key has already been taken", "/data/attributes/key");

const sameSlot = (a: Pick<WorkspaceVarRow, "key" | "category">, b: Pick<WorkspaceVarRow, "key" | "category">) =>
  a.key === b.key && a.category === b.category;

/** Routes of workspaces and their vars. */
export const workspaceRoutes = new Hono<NocodeEnv>();

// E4 (200, N2).
const workspaceCreate = operation({
  tag: "workspaces",
  summary: "Provision a workspace from a no-code module (E4; run-workspaces, not the organization token)",
  body: workspaceDocument,
  answers: { 200: { description: "The workspace, its first run queued", schema: workspaceDocumentAnswer } },
});

workspaceRoutes.post(
  "/no-code-modules/:id/workspaces",
  rights({ right: "run-workspaces" }, { cache: "unchanged", scope: provisionableModule }),
  workspaceCreate,
  async (c) => {
    const db = c.var.db;
    const module = provisionableModule.of(c);
    const input = workspaceInputOf(await workspaceCreate.body(c));
    const created = await provisionWorkspace(c.env, db, module, input, c.var.requestId);
    return jsonApi({ data: provisionedWorkspaceResource(c.var.orgRights, created) });
  },
);

const workspaceShow = operation({
  tag: "workspaces",
  summary: "Show a workspace (read-workspaces)",
  answers: { 200: { description: "The workspace", schema: workspaceDocumentAnswer } },
});

workspaceRoutes.get(
  "/workspaces/:id",
  rights({ right: "read-workspaces" }, { scope: workspaceById }),
  workspaceShow,
  async (c) => {
    const db = c.var.db;
    const ws = workspaceById.of(c);
    return jsonApi({ data: await loadWorkspaceResource(db, c.var.orgRights, ws) });
  },
);

const workspaceShowByName = operation({
  tag: "workspaces",
  summary: "Show a workspace by its organization and name (read-workspaces)",
  answers: { 200: { description: "The workspace", schema: workspaceDocumentAnswer } },
});

workspaceRoutes.get(
  "/organizations/:org/workspaces/:name",
  rights({ right: "read-workspaces" }),
  workspaceShowByName,
  async (c) => {
    const db = c.var.db;
    const ws = await findWorkspaceByName(db, c.req.param("org"), c.req.param("name"));
    if (!ws) throw notFound();
    return jsonApi({ data: await loadWorkspaceResource(db, c.var.orgRights, ws) });
  },
);

const varList = operation({
  tag: "workspaces",
  summary: "List a workspace's variables; sensitive values are null (N5; read-workspaces)",
  answers: { 200: { description: "The variables", schema: varListAnswer } },
});

workspaceRoutes.get(
  "/workspaces/:id/vars",
  rights({ right: "read-workspaces" }, { scope: workspaceById }),
  varList,
  async (c) => {
    const db = c.var.db;
    const ws = workspaceById.of(c);
    const vars = await listWorkspaceVars(db, ws.id);
    return jsonApi({ data: vars.map((v) => varResource(v, ws)) });
  },
);

const varCreate = operation({
  tag: "workspaces",
  summary: "Create a workspace variable (N5: the module's options apply; write-vars)",
  body: varCreateDocument,
  answers: { 201: { description: "The variable", schema: varDocumentAnswer } },
});

workspaceRoutes.post(
  "/workspaces/:id/vars",
  rights({ right: "write-vars" }, { cache: "unchanged", scope: workspaceById }),
  varCreate,
  async (c) => {
    const db = c.var.db;
    const ws = workspaceById.of(c);
    const input = varInputOf((await varCreate.body(c)).data.attributes);
    if (varValueTooDeep(input.hcl, input.value)) throw hclValueTooDeepError("/data/attributes/value");
    if (input.category === "env" && reservedEnvName(input.key))
      throw reservedEnvNameError(input.key, "/data/attributes/key");
    const existing = await listWorkspaceVars(db, ws.id);
    if (existing.some((v) => sameSlot(v, input))) throw keyTaken();
    checkVarOptions([input], (await moduleRules(db, ws)).options);
    const row = await newVarRow(c.env, ws.id, input, Date.now());
    await insertUnique(insertWorkspaceVarQuery(db, row).run(), keyTaken);
    return jsonApi({ data: varResource(row, ws) }, 201);
  },
);

const varUpdate = operation({
  tag: "workspaces",
  summary: "Update a workspace variable (N5; of a sensitive one only the value and description; write-vars)",
  body: varUpdateDocument,
  answers: { 200: { description: "The variable", schema: varDocumentAnswer } },
});

workspaceRoutes.patch(
  "/workspaces/:id/vars/:var_id",
  rights({ right: "write-vars" }, { cache: "unchanged", scope: workspaceById }),
  varUpdate,
  async (c) => {
    const db = c.var.db;
    const ws = workspaceById.of(c);
    const current = await findWorkspaceVar(db, ws.id, c.req.param("var_id"));
    if (!current) throw notFound();
    const attributes = (await varUpdate.body(c)).data.attributes;
    // `hcl` and `sensitive` null read as absent.
    const patch = { ...attributes, hcl: attributes.hcl ?? undefined, sensitive: attributes.sensitive ?? undefined };
    // B9: the value as it will be, with `hcl` as it will be (the stored ones where the PATCH omits them).
    if (varValueTooDeep(patch.hcl ?? current.hcl, patch.value ?? (current.sensitive ? null : current.value))) {
      throw hclValueTooDeepError("/data/attributes/value");
    }
    const key = patch.key ?? current.key;
    if ((patch.category ?? current.category) === "env" && reservedEnvName(key))
      throw reservedEnvNameError(key, "/data/attributes/key");

    if (current.sensitive) {
      // HCP Terraform's workspace variables API: of a sensitive var only the value (and description) may change.
      if (patch.sensitive === false)
        throw unprocessable("A sensitive variable cannot be made non-sensitive; delete and recreate it instead");
      const changes =
        (patch.key !== undefined && patch.key !== current.key) ||
        (patch.category !== undefined && patch.category !== current.category) ||
        (patch.hcl !== undefined && patch.hcl !== current.hcl);
      if (changes)
        throw unprocessable(
          "Only the value and description of a sensitive variable can be changed; delete and recreate it instead",
        );
    }
    const next = {
      key: patch.key ?? current.key,
      category: patch.category ?? current.category,
      hcl: patch.hcl ?? current.hcl,
      sensitive: patch.sensitive ?? current.sensitive,
      description: patch.description !== undefined ? patch.description : current.description,
    };
    const others = (await listWorkspaceVars(db, ws.id)).filter((v) => v.id !== current.id);
    if (others.some((v) => sameSlot(v, next))) throw keyTaken();

    // The value the rules see: the new one, or the current plaintext (unknown when sensitive).
    const value = patch.value !== undefined ? patch.value : current.sensitive ? null : (current.value ?? "");
    const rules = await moduleRules(db, ws);
    checkVarOptions([{ ...next, value }], rules.options);
    if (rules.summary) checkRequiredVars([...others, next], rules.summary, ws.noCodeVersion ?? "");

    let stored: Pick<WorkspaceVarRow, "value" | "valueEncrypted" | "sensitiveHash"> = current;
    if (patch.value !== undefined || next.sensitive !== current.sensitive || next.key !== current.key) {
      stored = await storedValue(c.env, ws.id, current.id, next.key, value ?? "", next.sensitive);
    }
    const now = Date.now();
    const updated: WorkspaceVarRow = {
      ...current,
      ...next,
      value: stored.value,
      valueEncrypted: stored.valueEncrypted,
      sensitiveHash: stored.sensitiveHash,
      versionId: newVarVersionId(),
      updatedAt: now,
    };
    await insertUnique(
      updateWorkspaceVarQuery(db, ws.id, current.id, {
        key: updated.key,
        category: updated.category,
        hcl: updated.hcl,
        sensitive: updated.sensitive,
        description: updated.description,
        value: updated.value,
        valueEncrypted: updated.valueEncrypted,
        sensitiveHash: updated.sensitiveHash,
        versionId: updated.versionId,
        updatedAt: now,
      }).run(),
      keyTaken,
    );
    return jsonApi({ data: varResource(updated, ws) });
  },
);

const varDelete = operation({
  tag: "workspaces",
  summary: "Delete a workspace variable (N5: a required module variable keeps a value)",
  answers: { 204: { description: "Deleted" } },
  errors: [422],
});

workspaceRoutes.delete(
  "/workspaces/:id/vars/:var_id",
  rights({ right: "write-vars" }, { cache: "unchanged", scope: workspaceById }),
  varDelete,
  async (c) => {
    const db = c.var.db;
    const ws = workspaceById.of(c);
    const current = await findWorkspaceVar(db, ws.id, c.req.param("var_id"));
    if (!current) throw notFound();
    // N5: a required module variable must keep a value.
    const { summary } = await moduleRules(db, ws);
    if (summary) {
      const others = (await listWorkspaceVars(db, ws.id)).filter((v) => v.id !== current.id);
      checkRequiredVars(others, summary, ws.noCodeVersion ?? "");
    }
    await deleteWorkspaceVarQuery(db, ws.id, current.id).run();
    return noContent();
  },
);

const workspaceRunList = operation({
  tag: "workspaces",
  summary: "List a workspace's runs, newest first (N7; read-workspaces)",
  query: pageQuery,
  answers: { 200: { description: "A page of runs", schema: runListAnswer } },
});

workspaceRoutes.get(
  "/workspaces/:id/runs",
  rights({ right: "read-workspaces" }, { scope: workspaceById }),
  workspaceRunList,
  async (c) => {
    const db = c.var.db;
    const workspace = workspaceById.of(c);
    const page = pageRequest(new URL(c.req.url));
    const listed = await workspaceRunsPage(db, workspace.id, page);
    const canAct = c.var.orgRights.has("run-workspaces");
    return jsonApiPage(c.req.url, page, listed, (r) =>
      runResource(r, { canAct, forceCancelAfterMs: forceCancelAfterMs(c.env) }),
    );
  },
);
