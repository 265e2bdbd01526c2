/**
 * Set-up shared by the no-code module, workspace, var and run tests (and the upgrade
 * tests): an organization with a registry module whose versions became `ok` through the
 * real upload link and Queue consumer, and an enabled no-code module pinned to one of
 * them. Everything goes through the public API (N9).
 */
import { exports } from "cloudflare:workers";
import { vi } from "vitest";
import { fixtureFiles } from "../fixtures/terraform";
import { buildTarball } from "../support/tarball";
import { type BootstrappedOrg, bootstrapOrg, type TfeAnswer, tfe, uniqueName } from "./nocode";

/**
 * The default module: `random-pet` (test/fixtures/terraform/random-pet). Variables:
 * `prefix` (string, required), `length` (number, default 2), `greeting` (sensitive,
 * default "hello"); resources `random_pet.name`, `null_resource.greet`; output `name`;
 * providers `random` and `null`.
 */
export const PET_FIXTURE = "random-pet";
/** Resource addresses of the default module. */
export const PET_RESOURCES = ["null_resource.greet", "random_pet.name"];

function expectStatus(answer: TfeAnswer, status: number, what: string): void {
  if (answer.status !== status) throw new Error(`${what}: expected ${status}, got ${answer.status} ${answer.text}`);
}

/** Path of a private module by address. */
export const registryModulePath = (org: string, name: string, provider: string) =>
  `organizations/${org}/registry-modules/private/${org}/${name}/${provider}`;

/** A registry module as created by {@link createRegistryModule}. */
export interface RegistryModuleRef {
  id: string;
  name: string;
  provider: string;
}

/** Create a private registry module with a unique name (201). */
export async function createRegistryModule(
  org: string,
  token: string,
  options: { provider?: string; noCode?: boolean; name?: string } = {},
): Promise<RegistryModuleRef> {
  const name = options.name ?? uniqueName("mod");
  const provider = options.provider ?? "random";
  const attributes: Record<string, unknown> = { name, provider, "registry-name": "private" };
  if (options.noCode !== undefined) attributes["no-code"] = options.noCode;
  const res = await tfe("POST", `organizations/${org}/registry-modules`, {
    token,
    body: { data: { type: "registry-modules", attributes } },
  });
  expectStatus(res, 201, "create registry module");
  return { id: res.json.data.id as string, name, provider };
}

/** Create a version without uploading anything (it stays `pending`). */
export async function createPendingVersion(
  org: string,
  module: RegistryModuleRef,
  version: string,
  token: string,
): Promise<{ id: string; upload: string }> {
  const res = await tfe("POST", `${registryModulePath(org, module.name, module.provider)}/versions`, {
    token,
    body: { data: { type: "registry-module-versions", attributes: { version } } },
  });
  expectStatus(res, 201, "create version");
  return { id: res.json.data.id as string, upload: res.json.data.links.upload as string };
}

/**
 * Publish `files` (archive path → source; default the random-pet fixture) as `version`
 * and wait until the Queue consumer has ingested it. Returns the version's id and final
 * status (`ok` or `reg_ingress_failed`).
 */
export async function publishVersion(
  org: string,
  module: RegistryModuleRef,
  version: string,
  token: string,
  files: Record<string, string> = fixtureFiles(PET_FIXTURE),
): Promise<{ id: string; status: string; error: string | null }> {
  const created = await createPendingVersion(org, module, version, token);
  return { id: created.id, ...(await uploadVersion(org, module, version, created.upload, token, files)) };
}

/**
 * Upload `files` through a pending version's upload link and wait until the Queue consumer
 * has ingested it. Returns the final status (`ok` or `reg_ingress_failed`) and error.
 */
export async function uploadVersion(
  org: string,
  module: RegistryModuleRef,
  version: string,
  upload: string,
  token: string,
  files: Record<string, string>,
): Promise<{ status: string; error: string | null }> {
  const put = await exports.default.fetch(upload, {
    method: "PUT",
    headers: { "Content-Type": "application/octet-stream" },
    body: await buildTarball(files),
  });
  await put.text();
  if (put.status !== 200) throw new Error(`upload: expected 200, got ${put.status}`);
  const path = `${registryModulePath(org, module.name, module.provider)}/version?module_version=${encodeURIComponent(version)}`;
  const attributes = await vi.waitFor(
    async () => {
      const read = await tfe("GET", path, { token });
      const status = read.json?.data?.attributes?.status;
      if (status !== "ok" && status !== "reg_ingress_failed") throw new Error(`version ${version} is still ${status}`);
      return read.json.data.attributes as { status: string; error: string | null };
    },
    { timeout: 25_000, interval: 50 },
  );
  return { status: attributes.status, error: attributes.error };
}

/** A variable-options entry of E1/E2. */
export function optionEntry(
  variableName: string,
  options: unknown[] | undefined,
  variableType = "string",
  id?: string,
) {
  const attributes: Record<string, unknown> = { "variable-name": variableName, "variable-type": variableType };
  if (options !== undefined) attributes.options = options;
  return id === undefined ? { type: "variable-options", attributes } : { id, type: "variable-options", attributes };
}

/** An E1 document. */
export function noCodeModuleDoc(
  registryModuleId: string,
  attributes: Record<string, unknown> = {},
  options?: ReturnType<typeof optionEntry>[],
  registryModuleType = "registry-module",
) {
  const relationships: Record<string, unknown> = {
    "registry-module": { data: { type: registryModuleType, id: registryModuleId } },
  };
  if (options !== undefined) relationships["variable-options"] = { data: options };
  return { data: { type: "no-code-modules", attributes, relationships } };
}

/** E1; returns the answer (no status check). */
export function enableNoCode(org: string, token: string, body: unknown): Promise<TfeAnswer> {
  return tfe("POST", `organizations/${org}/no-code-modules`, { token, body });
}

/** An organization with an `ok` module version and an enabled no-code module pinned to it. */
export interface NoCodeOrg extends BootstrappedOrg {
  registryModule: RegistryModuleRef;
  /** Registry version (`modver-…`) and its version string. */
  versionId: string;
  version: string;
  /** The no-code module (`nocode-…`). */
  noCodeModuleId: string;
}

/** Options of {@link noCodeOrg}. */
export interface NoCodeOrgOptions {
  /** The module's files (default: the random-pet fixture). */
  files?: Record<string, string>;
  version?: string;
  /** `enabled` of the no-code module (default true). */
  enabled?: boolean;
  /** Variable options of E1. */
  options?: ReturnType<typeof optionEntry>[];
  /** An organization to reuse instead of bootstrapping one. */
  org?: BootstrappedOrg;
}

/**
 * Bootstrap an organization (or reuse `options.org`), publish version `1.0.0` (default)
 * of a new module until it is `ok`, and enable it for no-code provisioning pinned there.
 *
 * @example
 * const ctx = await noCodeOrg();
 * const ws = await createNoCodeWorkspace(ctx.noCodeModuleId, ctx.ownerToken, { name: uniqueName("ws") }, [engineVar("prefix", "app")]);
 */
export async function noCodeOrg(options: NoCodeOrgOptions = {}): Promise<NoCodeOrg> {
  const org = options.org ?? (await bootstrapOrg());
  const version = options.version ?? "1.0.0";
  const registryModule = await createRegistryModule(org.org, org.ownerToken);
  const published = await publishVersion(org.org, registryModule, version, org.ownerToken, options.files);
  if (published.status !== "ok") throw new Error(`version ${version} failed ingestion: ${published.error}`);
  const enabled = await enableNoCode(
    org.org,
    org.ownerToken,
    noCodeModuleDoc(registryModule.id, { enabled: options.enabled ?? true, "version-pin": version }, options.options),
  );
  expectStatus(enabled, 200, "enable no-code module");
  return { ...org, registryModule, versionId: published.id, version, noCodeModuleId: enabled.json.data.id as string };
}

/** A var entry of E4 (and of E5). */
export function varEntry(key: string, value: string, attributes: Record<string, unknown> = {}) {
  return { type: "vars", attributes: { key, value, category: "engine", hcl: false, sensitive: false, ...attributes } };
}

/** An E4 document. */
export function workspaceDoc(
  attributes: Record<string, unknown>,
  vars: ReturnType<typeof varEntry>[] = [],
  relationships: Record<string, unknown> = {},
  type = "workspaces",
) {
  return { data: { type, attributes, relationships: { vars: { data: vars }, ...relationships } } };
}

/** E4; returns the answer (no status check). */
export function provisionWorkspace(noCodeModuleId: string, token: string, body: unknown): Promise<TfeAnswer> {
  return tfe("POST", `no-code-modules/${noCodeModuleId}/workspaces`, { token, body });
}

/**
 * E4 with a unique name (unless given) and `prefix` set (the default module requires
 * it); returns the workspace resource and its first run's id.
 */
export async function createNoCodeWorkspace(
  noCodeModuleId: string,
  token: string,
  attributes: Record<string, unknown> = {},
  vars: ReturnType<typeof varEntry>[] = [varEntry("prefix", "pet")],
  // biome-ignore lint/suspicious/noExplicitAny: test helpers return arbitrary JSON
): Promise<{ workspace: any; runId: string }> {
  const res = await provisionWorkspace(
    noCodeModuleId,
    token,
    workspaceDoc({ name: uniqueName("ws"), ...attributes }, vars),
  );
  expectStatus(res, 200, "create workspace");
  return { workspace: res.json.data, runId: res.json.data.relationships["latest-run"].data.id as string };
}

/** Poll `GET /runs/:id` until its status is one of `statuses`; returns the run resource. */
export async function waitForRun(
  runId: string,
  token: string,
  statuses: readonly string[],
  timeout = 20_000,
  // biome-ignore lint/suspicious/noExplicitAny: test helpers return arbitrary JSON
): Promise<any> {
  return vi.waitFor(
    async () => {
      const res = await tfe("GET", `runs/${runId}`, { token });
      const status = res.json?.data?.attributes?.status;
      if (!statuses.includes(status)) throw new Error(`run ${runId} is ${status}, waiting for ${statuses.join("|")}`);
      return res.json.data;
    },
    { timeout, interval: 50 },
  );
}
