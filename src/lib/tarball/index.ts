/**
 * Module tarball unpacking for registry ingestion (decisions B5, N4).
 * @module
 */
export {
  extractModuleTarball,
  MODULE_TARBALL_LIMITS,
  normaliseEntryPath,
  type TarballLimits,
} from "./extract-module-tarball";
