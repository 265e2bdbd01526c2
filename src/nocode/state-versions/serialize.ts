/**
 * JSON:API shapes of `state-versions` and `state-version-outputs` (decisions N7, N20), as
 * HCP Terraform answers them
 * (https://developer.hashicorp.com/terraform/cloud-docs/api-docs/state-versions).
 */
import * as v from "valibot";
import { identifierOf, orNull, pagedList, resourceAnswer, single, timestamp } from "../request/answers";
import { isoTime } from "../respond";
import type { StateVersionRow } from "../runs/repo";
import { outputId, recordedOutputs, type StateOutput } from "./outputs";

const API = "/api/v2";

/**
 * A `state-versions` resource. `downloadUrl`: the signed state download (B23) for a caller
 * who may download it, else null (N20); structural state versions (N7) have none.
 */
export function stateVersionResource(sv: StateVersionRow, downloadUrl: string | null) {
  const resources = JSON.parse(sv.resources) as string[];
  const outputs = recordedOutputs(sv);
  return {
    id: sv.id,
    type: "state-versions",
    attributes: {
      serial: sv.serial,
      lineage: sv.lineage,
      md5: sv.md5,
      size: sv.size,
      "created-at": isoTime(sv.createdAt),
      status: "finalized",
      "resources-processed": true,
      "hosted-state-download-url": downloadUrl,
      // N20: an engine state's bytes are downloadable; a structural one (N7) only lists its addresses.
      "state-kind": sv.kind,
      resources: resources.map((address) => ({ address })),
      outputs: outputs.map((o) => ({ name: o.name, sensitive: o.sensitive, value: null })),
    },
    relationships: {
      workspace: { data: { id: sv.workspaceId, type: "workspaces" } },
      // A recovery upload (N20) has no run.
      run: { data: sv.runId === "" ? null : { id: sv.runId, type: "runs" } },
      outputs: { data: outputs.map((_, i) => ({ id: outputId(sv.id, i), type: "state-version-outputs" })) },
    },
    links: { self: `${API}/state-versions/${sv.id}` },
  };
}

/** A `state-version-outputs` resource; `showSensitive` false renders a sensitive value as null (N20). */
export function stateOutputResource(output: StateOutput, showSensitive: boolean) {
  const hidden = output.sensitive && !showSensitive;
  return {
    id: output.id,
    type: "state-version-outputs",
    attributes: {
      name: output.name,
      sensitive: output.sensitive,
      type: output.type,
      value: hidden ? null : output.value,
      "detailed-type": output.detailedType,
    },
    links: { self: `${API}/state-version-outputs/${output.id}` },
  };
}

/** B14: a state version ({@link stateVersionResource}). */
const stateVersionAnswer = resourceAnswer(
  "state-versions",
  {
    serial: v.number(),
    lineage: orNull(v.string()),
    md5: orNull(v.string()),
    size: orNull(v.number()),
    "created-at": timestamp,
    status: v.literal("finalized"),
    "resources-processed": v.boolean(),
    "hosted-state-download-url": orNull(v.string()),
    "state-kind": v.picklist(["structural", "engine"]),
    resources: v.array(v.strictObject({ address: v.string() })),
    outputs: v.array(v.strictObject({ name: v.string(), sensitive: v.boolean(), value: v.null() })),
  },
  {
    workspace: v.strictObject({ data: identifierOf("workspaces") }),
    run: v.strictObject({ data: orNull(identifierOf("runs")) }),
    outputs: v.strictObject({ data: v.array(identifierOf("state-version-outputs")) }),
  },
);

/** B14: a document of one state version. */
export const stateVersionDocumentAnswer = single(stateVersionAnswer);

/** B14: a state version output ({@link stateOutputResource}). */
const stateOutputAnswer = resourceAnswer("state-version-outputs", {
  name: v.string(),
  sensitive: v.boolean(),
  type: v.string(),
  value: v.unknown(),
  "detailed-type": v.unknown(),
});

/** B14: a document of one output. */
export const stateOutputDocumentAnswer = single(stateOutputAnswer);

/** B14: a page of outputs. */
export const stateOutputListAnswer = pagedList(stateOutputAnswer);
