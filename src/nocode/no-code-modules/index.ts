/**
 * No-code modules (seed E1–E3, DELETE, module variables; decisions N3, N5, N9, N10, N12).
 * @module
 */
export { designError, designProblems } from "./design";
export { canonicalJson, noCodeModuleVersionId, optionSetFingerprint, workspaceVarsFingerprint } from "./fingerprint";
export { valueMatchesOptions } from "./options";
export {
  findNoCodeModule,
  findNoCodeModuleOfRegistryModule,
  listVariableOptions,
  type NoCodeModuleRow,
  type VariableOptionSet,
} from "./repo";
export { noCodeModuleRoutes, resolveVersionPin, VERSION_PIN_ERROR } from "./routes";
export { noCodeModuleResource, variableOptionsResource } from "./serialize";
