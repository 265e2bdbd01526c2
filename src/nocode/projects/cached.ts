/**
 * A workspace's project, served from the per-isolate cache (../cache.ts) for E4 (issue
 * 19): the named project when it belongs to the organization, else the organization's
 * default project (N6). Only found projects are kept: what a client names that does not
 * exist is read again every time. A project or organization change clears the cache in
 * the isolate that made it (app.ts) and reaches every other within the cache's TTL.
 */
import type { Db } from "../../db/client";
import { cachedNocode } from "../cache";
import { defaultProjectIdQuery } from "../organizations/repo";
import { projectIdInOrganizationQuery } from "./repo";

/** The project id E4 files a workspace under, or undefined when the named project (or the organization) is unknown. */
export function cachedWorkspaceProjectId(
  db: Db,
  organization: string,
  projectId: string | undefined,
): Promise<string | undefined> {
  const key: `project:${string}` =
    projectId === undefined ? `project:${organization}:default` : `project:${organization}:id:${projectId}`;
  return cachedNocode(
    key,
    async () => {
      const query =
        projectId === undefined
          ? defaultProjectIdQuery(db, organization)
          : projectIdInOrganizationQuery(db, organization, projectId);
      return (await query)[0]?.id ?? undefined;
    },
    { keep: (id) => id !== undefined },
  );
}
