/**
 * No-code modules (seed E1–E3; decisions N3, N5, N9, N10, N12): enable
 * (`POST /organizations/:org/no-code-modules`), update (`PATCH /no-code-modules/:id`),
 * read (`GET /no-code-modules/:id[?include=variable_options]`), delete, and the module
 * variables of a version (N9). E1, E2 need `manage-no-code-modules`, DELETE `manage-registry-modules`; the first refuse the
 * organization token (N10); E3 is open to any member. Not permitted → 404.
 */
import { Hono } from "hono";
import * as v from "valibot";
import type { Db } from "../../db/client";
import { insertUnique } from "../../db/unique";
import type { NocodeEnv } from "../env";
import { NocodeError, notFound, unprocessable } from "../errors";
import { newId } from "../ids";
import { sendProvisionMessage } from "../messages/provision";
import {
  findModuleVersion,
  findRegistryModuleById,
  latestOkVersion,
  type RegistryModuleRow,
  type RegistryModuleVersionRow,
  versionSummary,
} from "../registry/repo";
import { nullableFlag, relatedId, resourceDocument, toOne } from "../request/document";
import { operation } from "../request/operation";
import { includeParameter } from "../request/query";
import { jsonApi, noContent } from "../respond";
import { notifyRolloutOfModule } from "../rollout-hooks";
import { rights, scope } from "../route-rights";
import { cachedNoCodeModuleWithOptions } from "./cached";
import { designError } from "./design";
import { checkOptionSets, type OptionInput, optionInputsOf, variableOptionsRelationship } from "./options";
import {
  deleteNoCodeModule,
  findNoCodeModule,
  findNoCodeModuleOfRegistryModule,
  insertNoCodeModule,
  listVariableOptions,
  type NoCodeModuleRow,
  type NoCodeModuleUpdate,
  updateNoCodeModule,
  type VariableOptionSet,
} from "./repo";
import {
  moduleVariablesAnswer,
  noCodeModuleDocumentAnswer,
  noCodeModuleResource,
  variableOptionsResource,
} from "./serialize";

/** Accepted `data.type` of E1/E2 (N1). */
const NO_CODE_MODULE_TYPES = ["no-code-modules", "no-code-module"] as const;
/** Accepted type of the registry-module relationship (N1: go-tfe sends the plural). */
const REGISTRY_MODULE_TYPES = ["registry-modules", "registry-module"] as const;

/** N3: the exact text HCP Terraform answers for a bad pin (HCP Terraform's exact error text). */
export const VERSION_PIN_ERROR =
  "Validation failed: Provided version pin is not equal to latest or provided string does not represent an existing version of the module.";

/**
 * The version a pin names (N3): `undefined`/`null`/`latest` → the module's latest `ok`
 * version (null when none); an existing version (pending ones allowed) → that version;
 * anything else → 422.
 */
export async function resolveVersionPin(
  db: Db,
  registryModuleId: string,
  requested: string | null | undefined,
): Promise<RegistryModuleVersionRow | null> {
  if (requested === undefined || requested === null || requested === "latest")
    return latestOkVersion(db, registryModuleId);
  const version = await findModuleVersion(db, registryModuleId, requested);
  if (!version) throw unprocessable(VERSION_PIN_ERROR);
  return version;
}

/**
 * The request document of E1 and E2: `enabled` and `version-pin` (null reads as absent;
 * go-tfe sends "" for an unset pin: the same as omitting it), the `registry-module` and
 * `variable-options` relationships. E1 requires the registry module (the handler says so,
 * as E2 does not).
 */
const noCodeModuleDocument = resourceDocument({
  types: NO_CODE_MODULE_TYPES,
  attributes: {
    enabled: nullableFlag("enabled"),
    "version-pin": v.nullish(
      v.pipe(
        v.string("Version pin must be a string"),
        v.transform((pin) => (pin === "" ? undefined : pin.trim())),
      ),
    ),
  },
  relationships: {
    "registry-module": toOne("registry-module", REGISTRY_MODULE_TYPES),
    "variable-options": variableOptionsRelationship,
  },
});

/** The parts of an E1/E2 document. */
interface NoCodeModuleInput {
  enabled: boolean | undefined;
  pin: string | null | undefined;
  registryModuleId: string | undefined;
  /** undefined when the relationship is absent (E2: options left alone). */
  options: OptionInput[] | undefined;
}

function noCodeModuleInput({ data }: v.InferOutput<typeof noCodeModuleDocument>): NoCodeModuleInput {
  return {
    enabled: data.attributes.enabled ?? undefined,
    pin: data.attributes["version-pin"],
    registryModuleId: relatedId(data.relationships["registry-module"]),
    options: optionInputsOf(data.relationships["variable-options"]),
  };
}

/** The registry module a relationship names, in `organization`; 404 otherwise (HCP Terraform's no-code provisioning API (E1)). */
async function registryModuleIn(db: Db, organization: string, id: string): Promise<RegistryModuleRow> {
  const module = await findRegistryModuleById(db, id);
  if (!module || module.organization !== organization) throw notFound();
  return module;
}

/** 422 of N3 for a second no-code module of one registry module. */
const alreadyEnabled = () => unprocessable("Validation failed: Registry module already has a no-code module.");

/** Render a module with its option ids, after reading them back. */
async function render(db: Db, module: NoCodeModuleRow, include: boolean) {
  return renderWith(module, await listVariableOptions(db, module.id), include);
}

/** The JSON:API document of a module and its option sets. */
function renderWith(module: NoCodeModuleRow, sets: readonly VariableOptionSet[], include: boolean) {
  const doc: Record<string, unknown> = { data: noCodeModuleResource(module, sets) };
  if (include) doc.included = sets.map(variableOptionsResource);
  return doc;
}

/** The no-code module `:id`. */
const noCodeModuleById = scope(async (c) => {
  const module = await findNoCodeModule(c.var.db, c.req.param("id") ?? "");
  return module && { resource: module, organization: module.organization };
});

/** The no-code module `:id` with its option sets, in one round trip from the per-isolate cache (../cache.ts). */
const noCodeModuleWithOptionsById = scope(async (c) => {
  const found = await cachedNoCodeModuleWithOptions(c.var.db, c.req.param("id") ?? "");
  return found && { resource: found, organization: found.module.organization };
});

/** Routes of no-code modules. */
export const noCodeModuleRoutes = new Hono<NocodeEnv>();

// E1: enable no-code provisioning for a registry module (200, N2).
const noCodeModuleCreate = operation({
  tag: "no-code-modules",
  summary: "Enable no-code provisioning for a registry module (E1; manage-no-code-modules, not the organization token)",
  body: noCodeModuleDocument,
  answers: { 200: { description: "The no-code module", schema: noCodeModuleDocumentAnswer } },
  // 422 also for the rules of N3, N5 and N12 (pin, option sets, design).
});

noCodeModuleRoutes.post(
  "/organizations/:org/no-code-modules",
  rights({ right: "manage-no-code-modules" }),
  noCodeModuleCreate,
  async (c) => {
    const org = c.req.param("org");
    const db = c.var.db;
    const input = noCodeModuleInput(await noCodeModuleCreate.body(c));
    if (input.registryModuleId === undefined) {
      throw new NocodeError("invalid_attribute", "Registry module is required", "/data/relationships/registry-module");
    }
    const registryModule = await registryModuleIn(db, org, input.registryModuleId);
    if (await findNoCodeModuleOfRegistryModule(db, registryModule.id)) throw alreadyEnabled();
    const pinned = await resolveVersionPin(db, registryModule.id, input.pin);
    const summary = pinned ? versionSummary(pinned) : null;
    // A new module owns no sets yet: any id is someone else's (N5).
    const sets = checkOptionSets(input.options ?? [], summary, new Set());
    // N12: E1 with an `ok` pin requires the design requirements.
    if (pinned && summary) {
      const problem = designError(pinned.version, summary);
      if (problem) throw problem;
    }
    const now = Date.now();
    const module: NoCodeModuleRow = {
      id: newId("nocode"),
      organization: org,
      registryModuleId: registryModule.id,
      enabled: input.enabled ?? false, // N3: the seed's default, not the observed `true`
      versionPin: pinned?.version ?? null,
      createdAt: now,
      updatedAt: now,
    };
    // Two concurrent E1s for one registry module: the UNIQUE index keeps one (N3).
    await insertUnique(insertNoCodeModule(db, module, sets, now), alreadyEnabled);
    return jsonApi(await render(db, module, false));
  },
);

// E3: read, optionally with the variable options included.
const noCodeModuleShow = operation({
  tag: "no-code-modules",
  summary: "Show a no-code module; `include=variable_options` adds its option sets (E3; any member)",
  // N1: `variable_options` (HCP's spelling) or `variable-options`.
  query: v.looseObject({ include: includeParameter(["variable_options", "variable-options"]) }),
  answers: { 200: { description: "The no-code module", schema: noCodeModuleDocumentAnswer } },
});

noCodeModuleRoutes.get(
  "/no-code-modules/:id",
  rights({ right: "member" }, { scope: noCodeModuleWithOptionsById }),
  noCodeModuleShow,
  async (c) => {
    const found = noCodeModuleWithOptionsById.of(c);
    const include = noCodeModuleShow.query(c).include ?? [];
    return jsonApi(renderWith(found.module, found.sets, include.length > 0));
  },
);

// E2: update. Omitted attributes and relationships keep their values (N3, N5).
const noCodeModuleUpdate = operation({
  tag: "no-code-modules",
  summary:
    "Update a no-code module; omitted members keep their values (E2; manage-no-code-modules, not the organization token)",
  body: noCodeModuleDocument,
  answers: { 200: { description: "The no-code module", schema: noCodeModuleDocumentAnswer } },
  // 422 also for the rules of N3, N5 and N12 (pin, option sets, design).
});

noCodeModuleRoutes.patch(
  "/no-code-modules/:id",
  rights({ right: "manage-no-code-modules" }, { scope: noCodeModuleById }),
  noCodeModuleUpdate,
  async (c) => {
    const db = c.var.db;
    const current = noCodeModuleById.of(c);
    const input = noCodeModuleInput(await noCodeModuleUpdate.body(c));

    let registryModuleId = current.registryModuleId;
    if (input.registryModuleId !== undefined && input.registryModuleId !== current.registryModuleId) {
      const other = await registryModuleIn(db, current.organization, input.registryModuleId);
      if (await findNoCodeModuleOfRegistryModule(db, other.id)) throw alreadyEnabled();
      registryModuleId = other.id;
    }
    const moduleChanged = registryModuleId !== current.registryModuleId;
    // The pin: as sent; else kept (or, on a new registry module, that module's latest).
    let pinned: RegistryModuleVersionRow | null;
    if (input.pin !== undefined || moduleChanged) pinned = await resolveVersionPin(db, registryModuleId, input.pin);
    else
      pinned =
        current.versionPin === null
          ? null
          : ((await findModuleVersion(db, registryModuleId, current.versionPin)) ?? null);
    const versionPin = pinned?.version ?? null;
    const enabled = input.enabled ?? current.enabled;
    const summary = pinned ? versionSummary(pinned) : null;

    // N5: the resulting option set must fit the resulting pin.
    const existing = await listVariableOptions(db, current.id);
    const optionInputs: OptionInput[] =
      input.options ??
      existing.map((s: VariableOptionSet) => ({
        id: s.id,
        variableName: s.variableName,
        variableType: s.variableType,
        options: s.options,
      }));
    const sets = checkOptionSets(optionInputs, summary, new Set(existing.map((s) => s.id)));

    // N12: enabling, or moving an enabled module's pin, needs an `ok` pin that meets the design requirements.
    const pinMoved = moduleChanged || versionPin !== current.versionPin;
    if (pinned && summary && enabled && (!current.enabled || pinMoved)) {
      const problem = designError(pinned.version, summary);
      if (problem) throw problem;
    }

    const now = Date.now();
    const updated: NoCodeModuleRow = { ...current, registryModuleId, versionPin, enabled, updatedAt: now };
    const changed =
      updated.registryModuleId !== current.registryModuleId ||
      updated.versionPin !== current.versionPin ||
      updated.enabled !== current.enabled;
    // The registry modules' legacy flags change in the same batch.
    const legacyFlags: NoCodeModuleUpdate["legacyFlags"] = [];
    if (moduleChanged) legacyFlags.push({ registryModuleId: current.registryModuleId, noCode: false });
    if (moduleChanged || updated.enabled !== current.enabled) legacyFlags.push({ registryModuleId, noCode: enabled });
    const write = updateNoCodeModule(db, current.id, {
      row: changed ? updated : undefined,
      sets: input.options !== undefined ? sets : undefined,
      legacyFlags,
      now,
    });
    // Moving to a registry module that meanwhile got a no-code module loses on the UNIQUE index (N3).
    await (moduleChanged ? insertUnique(write, alreadyEnabled) : write);
    // N15: a rollout of this module ends `failed` when its pin moves (or the module is disabled).
    if (changed) await notifyRolloutOfModule(db, current.id, (message) => sendProvisionMessage(c.env, message));
    // A PATCH that changes nothing answers exactly what E1 answered (HCP Terraform's no-code provisioning API (E2)).
    return jsonApi(await render(db, changed ? updated : current, false));
  },
);

// Disable no-code provisioning: the module and its options go; workspaces stay (204).
// N10, N10a: a registry-module write (the organization token may), unlike E1 and E2.
const noCodeModuleDelete = operation({
  tag: "no-code-modules",
  summary:
    "Disable no-code provisioning: the module and its options go, workspaces stay (N10a; manage-registry-modules)",
  answers: { 204: { description: "Deleted" } },
});

noCodeModuleRoutes.delete(
  "/no-code-modules/:id",
  rights({ right: "manage-registry-modules" }, { scope: noCodeModuleById }),
  noCodeModuleDelete,
  async (c) => {
    const db = c.var.db;
    const module = noCodeModuleById.of(c);
    await deleteNoCodeModule(db, module);
    await notifyRolloutOfModule(db, module.id, (message) => sendProvisionMessage(c.env, message));
    return noContent();
  },
);

// N9: the input variables of a version, for building forms, with the module's options.
const moduleVariableList = operation({
  tag: "no-code-modules",
  summary:
    "The input variables of a module version with the module's options, for forms (N9; any member); 422 before the version is ingested",
  answers: { 200: { description: "The version's variables", schema: moduleVariablesAnswer } },
  errors: [422],
});

noCodeModuleRoutes.get(
  "/no-code-modules/:id/versions/:version/module-variables",
  rights({ right: "member" }, { scope: noCodeModuleById }),
  moduleVariableList,
  async (c) => {
    const db = c.var.db;
    const module = noCodeModuleById.of(c);
    const version = await findModuleVersion(db, module.registryModuleId, c.req.param("version"));
    if (!version) throw notFound();
    const summary = versionSummary(version);
    if (!summary)
      throw unprocessable(`Module version ${version.version} has not been ingested (status ${version.status})`);
    const sets = await listVariableOptions(db, module.id);
    const optionsOf = new Map(sets.map((s) => [s.variableName, s.options]));
    const data = summary.variables.map((v) => ({
      id: `${version.id}-${v.name}`,
      type: "registry-module-variables",
      attributes: {
        name: v.name,
        type: v.type,
        description: v.description,
        required: v.required,
        sensitive: v.sensitive,
        default: v.default === null ? null : v.default.literal ? v.default.value : v.default.source,
        options: optionsOf.get(v.name) ?? [],
        "has-global": false,
      },
    }));
    return jsonApi({ data });
  },
);
