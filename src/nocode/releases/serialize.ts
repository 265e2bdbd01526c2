/** The `terraform-versions` resource (HCP Terraform Enterprise admin API shape). */

import * as v from "valibot";
import type { terraformVersions } from "../../db/schema/nocode";
import { orNull, resourceAnswer, timestamp } from "../request/answers";
import { isoTime } from "../respond";

export type ReleaseRow = typeof terraformVersions.$inferSelect;

/** Serialize a release of the engine release list (N6). */
export function serializeRelease(row: ReleaseRow) {
  return {
    id: row.id,
    type: "terraform-versions",
    attributes: {
      version: row.version,
      url: row.url,
      sha: row.sha,
      official: row.official,
      enabled: row.enabled,
      beta: row.beta,
      deprecated: row.deprecated,
      "deprecated-reason": row.deprecatedReason,
      "created-at": isoTime(row.createdAt),
      "updated-at": isoTime(row.updatedAt),
    },
    links: { self: `/api/v2/admin/terraform-versions/${row.id}` },
  };
}

/** B14: the resource serializeRelease renders. */
export const releaseAnswer = resourceAnswer("terraform-versions", {
  version: v.string(),
  url: orNull(v.string()),
  sha: orNull(v.string()),
  official: v.boolean(),
  enabled: v.boolean(),
  beta: v.boolean(),
  deprecated: v.boolean(),
  "deprecated-reason": orNull(v.string()),
  "created-at": timestamp,
  "updated-at": timestamp,
});
