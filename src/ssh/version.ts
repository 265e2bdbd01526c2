/**
 * Keyway's version, as Vault's `version` field reports it (`sys/health`, `sys/seal-status`)
 * and as the /v1 OpenAPI document's `info.version` carries it.
 */
import packageJson from "../../package.json";

export const KEYWAY_VERSION: string = packageJson.version;
