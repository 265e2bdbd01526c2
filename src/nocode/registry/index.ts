/**
 * The private module registry of the no-code service (decisions N3, N4, N9, B5): modules,
 * versions, upload links, ingestion, and the N3 "latest" helper other features use.
 * @module
 */
import { Hono } from "hono";
import type { NocodeEnv } from "../env";
import { moduleRoutes } from "./modules";
import { uploadRoutes } from "./uploads";
import { versionRoutes } from "./versions";

export {
  findModuleVersion,
  findModuleVersionById,
  findRegistryModule,
  findRegistryModuleById,
  latestOkVersion,
  PRIVATE_REGISTRY,
  type RegistryModuleRow,
  type RegistryModuleVersionRow,
  type RegistryModuleVersionStatus,
  setRegistryModuleNoCodeStatement,
  versionSummary,
} from "./repo";
export { compareSemver, compareVersionStrings, parseSemver, pickLatestRelease, type Semver } from "./semver";
export { registryModulePath, registryModuleResource, registryModuleVersionResource } from "./serializers";

/** Every registry route, mounted on the no-code app at `/` (paths are relative to /api/v2). */
export const registryRoutes = new Hono<NocodeEnv>();
registryRoutes.route("/", uploadRoutes);
registryRoutes.route("/", moduleRoutes);
registryRoutes.route("/", versionRoutes);
