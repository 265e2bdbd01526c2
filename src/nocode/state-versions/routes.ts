/**
 * State versions and their outputs (decisions N7, N20), HCP Terraform's API:
 * `GET /workspaces/:id/current-state-version`, `GET /state-versions/:id`,
 * `GET /state-versions/:id/outputs`, `GET /state-version-outputs/:id`,
 * `GET /workspaces/:id/current-state-version-outputs`, the signed state download, and the
 * owners' recovery upload `POST /workspaces/:id/state-versions` (docs/api-nocode.md gives
 * the recipe).
 *
 * N20's rights: metadata and outputs (sensitive values null) need `read-workspaces`; the
 * state download (`hosted-state-download-url`, null for anyone else) and a sensitive value
 * through `state-version-outputs/:id` need manage-workspaces as a user or team
 * (`run-workspaces`, which the organization token never holds: it gets null and 404).
 */
import { type Context, Hono } from "hono";
import * as v from "valibot";
import { SIGNED_LINK_HEADERS } from "../../lib/crypto/signed-link";
import type { OrgPermission } from "../access/permissions";
import { findRunData } from "../agents/repo";
import { openRunData } from "../agents/run-data";
import { recordStoredEngineState } from "../agents/state-upload";
import type { NocodeEnv } from "../env";
import { conflict, invalidAttribute, notFound } from "../errors";
import { requiredText, resourceDocument } from "../request/document";
import { operation, validDocument } from "../request/operation";
import { type PageRequest, pageOf, pageQuery } from "../request/query";
import { jsonApi, jsonApiPage } from "../respond";
import { rights, scope } from "../route-rights";
import { runDataLink, runDataLinkValid, signedLinkRefused } from "../run-data/links";
import { findStateVersion, findStateVersionWithOrganization, type StateVersionRow } from "../runs/repo";
import { lockHolderOf } from "../workspaces/lock-routes";
import { findWorkspace, type WorkspaceRow } from "../workspaces/repo";
import { parseOutputId, recordedOutputs, stateOutputs, stateOutputsPage } from "./outputs";
import { readRecoveryUpload } from "./recovery";
import {
  stateOutputDocumentAnswer,
  stateOutputListAnswer,
  stateOutputResource,
  stateVersionDocumentAnswer,
  stateVersionResource,
} from "./serialize";

/** B23: the state download link's lifetime. */
const STATE_LINK_SECONDS = 60;

/** N20: who may download raw state and read sensitive values (manage-workspaces, user or team tokens). */
const MAY_DOWNLOAD: OrgPermission = "run-workspaces";

/** The state version `:id`, with its workspace's organization. */
const stateVersionById = scope(async (c) => {
  const sv = await findStateVersionWithOrganization(c.var.db, c.req.param("id") ?? "");
  return sv && { resource: sv, organization: sv.organization };
});

/** The workspace `:id`. */
const workspaceById = scope(async (c) => {
  const ws = await findWorkspace(c.var.db, c.req.param("id") ?? "");
  return ws && { resource: ws, organization: ws.organization };
});

/**
 * The output `:id` and its state version. A sensitive output is addressed with N20's right
 * for sensitive values, so a caller without it gets 404 as for an output that does not exist.
 */
const outputById = scope(async (c) => {
  const parsed = parseOutputId(c.req.param("id") ?? "");
  if (!parsed) return undefined;
  const sv = await findStateVersionWithOrganization(c.var.db, parsed.stateVersionId);
  const recorded = sv ? recordedOutputs(sv)[parsed.position] : undefined;
  if (!sv || !recorded) return undefined;
  return {
    resource: { sv, position: parsed.position },
    organization: sv.organization,
    ...(recorded.sensitive ? { right: MAY_DOWNLOAD } : {}),
  };
});

/** A state version as the caller sees it: the download link only for who may use it (N20). */
async function renderStateVersion(c: Context<NocodeEnv>, sv: StateVersionRow) {
  const downloadable = sv.kind === "engine" && sv.objectId !== null && c.var.orgRights.has(MAY_DOWNLOAD);
  const url = downloadable
    ? await runDataLink(c.env, new URL(c.req.url).origin, "state", sv.id, STATE_LINK_SECONDS)
    : null;
  return stateVersionResource(sv, url);
}

/** The workspace's current state version; 404 when it has none. */
async function currentStateVersion(c: Context<NocodeEnv>, ws: WorkspaceRow): Promise<StateVersionRow> {
  const sv = ws.currentStateVersionId ? await findStateVersion(c.var.db, ws.currentStateVersionId) : undefined;
  if (!sv) throw notFound();
  return sv;
}

/** One page of a state version's outputs, sensitive values null (N20). */
async function outputListPage(c: Context<NocodeEnv>, sv: StateVersionRow, page: PageRequest): Promise<Response> {
  const listed = await stateOutputsPage(c.env, c.var.db, sv, page);
  return jsonApiPage(c.req.url, page, listed, (o) => stateOutputResource(o, false));
}

/** Routes of state versions and outputs. */
export const stateVersionRoutes = new Hono<NocodeEnv>();

stateVersionRoutes.get(
  "/workspaces/:id/current-state-version",
  rights({ right: "read-workspaces" }, { scope: workspaceById }),
  operation({
    tag: "state-versions",
    summary: "The workspace's current state version (N20; read-workspaces); 404 when it has none",
    answers: { 200: { description: "The current state version", schema: stateVersionDocumentAnswer } },
  }),
  async (c) => jsonApi({ data: await renderStateVersion(c, await currentStateVersion(c, workspaceById.of(c))) }),
);

stateVersionRoutes.get(
  "/state-versions/:id",
  rights({ right: "read-workspaces" }, { scope: stateVersionById }),
  operation({
    tag: "state-versions",
    summary:
      "Show a state version: serial, lineage, md5, size, resources and outputs (values null), the state download link for manage-workspaces (N7, N20)",
    answers: { 200: { description: "The state version", schema: stateVersionDocumentAnswer } },
  }),
  async (c) => jsonApi({ data: await renderStateVersion(c, stateVersionById.of(c)) }),
);

const outputList = operation({
  tag: "state-versions",
  summary: "A state version's outputs, sensitive values null (N20; read-workspaces)",
  query: pageQuery,
  answers: { 200: { description: "One page of outputs", schema: stateOutputListAnswer } },
});

stateVersionRoutes.get(
  "/state-versions/:id/outputs",
  rights({ right: "read-workspaces" }, { scope: stateVersionById }),
  outputList,
  async (c) => outputListPage(c, stateVersionById.of(c), pageOf(outputList.query(c))),
);

const currentOutputList = operation({
  tag: "state-versions",
  summary: "The current state version's outputs, sensitive values null (N20; read-workspaces); 404 without state",
  query: pageQuery,
  answers: { 200: { description: "One page of outputs", schema: stateOutputListAnswer } },
});

stateVersionRoutes.get(
  "/workspaces/:id/current-state-version-outputs",
  rights({ right: "read-workspaces" }, { scope: workspaceById }),
  currentOutputList,
  async (c) => {
    const page = pageOf(currentOutputList.query(c));
    return outputListPage(c, await currentStateVersion(c, workspaceById.of(c)), page);
  },
);

stateVersionRoutes.get(
  "/state-version-outputs/:id",
  rights({ right: "read-workspaces" }, { scope: outputById }),
  operation({
    tag: "state-versions",
    summary:
      "Show an output with its value (N20): read-workspaces; a sensitive one needs manage-workspaces as a user or team (else 404)",
    answers: { 200: { description: "The output", schema: stateOutputDocumentAnswer } },
  }),
  async (c) => {
    const { sv, position } = outputById.of(c);
    const output = (await stateOutputs(c.env, c.var.db, sv))[position];
    if (!output) throw notFound();
    // The scope required MAY_DOWNLOAD for a sensitive output: whoever gets here may see it.
    return jsonApi({ data: stateOutputResource(output, true) });
  },
);

// B23: the state download. The link is the credential (N2a); any refusal is 404.
stateVersionRoutes.get(
  "/signed/state-versions/:id",
  rights({ caller: "public" }),
  operation({
    tag: "state-versions",
    summary: "Download a state version's state through its signed link (B23: 60 s; no token)",
    answers: {
      200: {
        description: "The state, as the engine wrote it",
        contentType: "application/json",
        schema: v.unknown(),
      },
    },
    errors: [404],
  }),
  async (c) => {
    const id = c.req.param("id");
    const valid = await runDataLinkValid(c.env, "state", id, c.req.query());
    const sv = valid ? await findStateVersion(c.var.db, id) : undefined;
    const row = sv?.objectId ? await findRunData(c.var.db, sv.objectId) : undefined;
    const stream = row ? await openRunData(c.env, row) : null;
    if (!stream) return signedLinkRefused();
    return c.body(stream, 200, { ...SIGNED_LINK_HEADERS, "Content-Type": "application/json" });
  },
);

const recoveryUpload = operation({
  tag: "state-versions",
  summary:
    "Upload a state by hand to recover a workspace (N20; owners; the caller must hold the workspace's lock; N20's serial and lineage rules; a state of up to 64 MiB, read as a stream; 413 beyond)",
  body: resourceDocument({
    types: ["state-versions"],
    attributes: {
      serial: v.pipe(
        v.number("Serial must be a number"),
        v.integer("Serial must be an integer"),
        v.minValue(0, "Serial must be at least 0"),
      ),
      md5: v.pipe(requiredText("md5"), v.regex(/^[0-9a-f]{32}$/, "Md5 must be 32 lower-case hex digits")),
      lineage: requiredText("lineage"),
      state: requiredText("state"),
    },
  }),
  answers: {
    201: { description: "The new state version", schema: stateVersionDocumentAnswer },
    200: {
      description: "The state is the current one already: nothing was recorded",
      schema: stateVersionDocumentAnswer,
    },
  },
  errors: [409, 413],
});

stateVersionRoutes.post(
  "/workspaces/:id/state-versions",
  rights({ right: "owner" }, { cache: "unchanged", scope: workspaceById }),
  recoveryUpload,
  async (c) => {
    const db = c.var.db;
    const ws = workspaceById.of(c);
    // N20: only the holder of the workspace's lock may replace its state (judged before the body is read).
    const holder = lockHolderOf(c.var.caller!);
    if (holder === null || ws.lockedBy !== holder)
      throw conflict("The workspace must be locked by you to upload a state version");
    const upload = await readRecoveryUpload(c.env, c.req.raw);
    const refuse = async (err: Error): Promise<never> => {
      await c.env.RUN_DATA.delete(upload.object.r2Key);
      throw err;
    };
    let attributes: { serial: number; md5: string; lineage: string };
    try {
      attributes = validDocument(recoveryUpload.spec.body!, upload.document).data.attributes;
    } catch (err) {
      return refuse(err as Error);
    }
    const { serial, md5, lineage } = attributes;
    const { summary } = upload;
    if (upload.md5 !== md5) return refuse(invalidAttribute("md5", "Md5 does not match the state's MD5"));
    if (summary.serial !== serial)
      return refuse(invalidAttribute("serial", "Serial does not match the state's serial"));
    if (summary.lineage !== lineage)
      return refuse(invalidAttribute("lineage", "Lineage does not match the state's lineage"));
    const recorded = await recordStoredEngineState(c.env, db, ws.id, null, summary, upload.md5, upload.object);
    if (recorded.kind === "refused") throw conflict(recorded.message);
    const sv = await findStateVersion(db, recorded.id);
    if (!sv) throw notFound();
    return jsonApi({ data: await renderStateVersion(c, sv) }, recorded.kind === "created" ? 201 : 200);
  },
);
