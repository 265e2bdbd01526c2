/**
 * Module tarball unpacking for registry ingestion (decisions B5, N4).
 * @module
 */
export {
  type ExtractedModule,
  type ExtractResult,
  extractModuleTarball,
  MODULE_TARBALL_LIMITS,
  normaliseEntryPath,
  type RejectedModule,
  type TarballLimits,
  TerraformFiles,
  TfEncodingError,
} from "./extract-module-tarball";
