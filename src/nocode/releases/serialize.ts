/** The `terraform-versions` resource (HCP Terraform Enterprise admin API shape). */
import type { terraformVersions } from "../../db/schema";
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
