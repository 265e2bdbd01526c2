/**
 * B10: which secrets make a deployment misconfigured (src/lib/deployment-config/), and
 * that every placeholder of .dev.vars.example is among them (the example and the check
 * stay in step). The messages name the setting, never a value.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parseKek } from "../../../src/lib/crypto/kek";
import { cachedDeploymentProblem, type DeploymentSecrets, deploymentProblem } from "../../../src/lib/deployment-config";

const key = (fill: number) => Buffer.alloc(32, fill).toString("base64");
const GOOD: DeploymentSecrets = {
  ROOT_TOKEN: "hvs.root-token-for-tests",
  ADMIN_TOKEN: "admin.atlasv1.admin-token-for-tests",
  KEYWAY_HASH_KEY: key(7),
  KEYWAY_KEK: `k2:${key(9)},k1:${key(8)}`,
};

function exampleValues(): Record<string, string> {
  const text = readFileSync(path.resolve(import.meta.dirname, "../../../.dev.vars.example"), "utf8");
  return Object.fromEntries(
    text
      .split("\n")
      .map((l) => /^([A-Z0-9_]+)=(.*)$/.exec(l.trim()))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => [m[1]!, m[2]!]),
  );
}

describe("deploymentProblem", () => {
  it("accepts a sound configuration", () => {
    expect(deploymentProblem(GOOD)).toBeNull();
    expect(deploymentProblem({ ...GOOD, KEYWAY_KEK: key(3) })).toBeNull(); // a bare key (id k0)
  });

  it("refuses each placeholder of .dev.vars.example, naming the setting", () => {
    const example = exampleValues();
    expect(Object.keys(example).sort()).toEqual(["ADMIN_TOKEN", "KEYWAY_HASH_KEY", "KEYWAY_KEK", "ROOT_TOKEN"]);
    for (const [name, value] of Object.entries(example)) {
      const problem = deploymentProblem({ ...GOOD, [name]: value });
      expect(problem, name).not.toBeNull();
      expect(problem!.startsWith(`${name}:`)).toBe(true);
    }
    // The example as a whole (what `cp .dev.vars.example .dev.vars` gives).
    expect(deploymentProblem(example)).not.toBeNull();
  });

  it("refuses ROOT_TOKEN equal to ADMIN_TOKEN", () => {
    expect(deploymentProblem({ ...GOOD, ADMIN_TOKEN: GOOD.ROOT_TOKEN })).toMatch(/^ROOT_TOKEN: equal to ADMIN_TOKEN/);
  });

  it("refuses missing secrets", () => {
    for (const name of ["ROOT_TOKEN", "ADMIN_TOKEN", "KEYWAY_HASH_KEY", "KEYWAY_KEK"] as const) {
      expect(deploymentProblem({ ...GOOD, [name]: undefined })).toBe(`${name}: not set`);
      expect(deploymentProblem({ ...GOOD, [name]: "" })).toBe(`${name}: not set`);
    }
  });

  it("refuses keys that are not 32 bytes, bad base64 and bad key ids", () => {
    const short = Buffer.alloc(16, 1).toString("base64");
    const long = Buffer.alloc(33, 1).toString("base64");
    for (const hashKey of [short, long, "not base64!", key(0)])
      expect(deploymentProblem({ ...GOOD, KEYWAY_HASH_KEY: hashKey })).toMatch(/^KEYWAY_HASH_KEY: /);
    for (const kek of [
      `k1:${short}`,
      `k1:${key(1)},k2:${long}`,
      `k1:${key(1)},bad id:${key(2)}`,
      ",",
      `k1:${key(1)},k2:${key(0)}`,
    ]) {
      expect(deploymentProblem({ ...GOOD, KEYWAY_KEK: kek }), kek).toMatch(/^KEYWAY_KEK: /);
    }
  });

  it("refuses duplicate key ids (k1:NEW,k1:OLD never encrypts with either silently)", () => {
    const problem = deploymentProblem({ ...GOOD, KEYWAY_KEK: `k1:${key(1)},k1:${key(2)}` });
    expect(problem).toBe('KEYWAY_KEK: duplicate key id "k1"');
    expect(() => parseKek(`k1:${key(1)},k1:${key(2)}`)).toThrow('duplicate key id "k1"');
  });

  it("never puts a value in its message", () => {
    const secrets = [key(0), "change-me-root-token", Buffer.alloc(16, 5).toString("base64"), "shared-token-value"];
    const configs: DeploymentSecrets[] = [
      { ...GOOD, KEYWAY_KEK: `k1:${secrets[0]}` },
      { ...GOOD, ROOT_TOKEN: secrets[1] },
      { ...GOOD, KEYWAY_HASH_KEY: secrets[2] },
      { ...GOOD, ROOT_TOKEN: secrets[3], ADMIN_TOKEN: secrets[3] },
    ];
    for (const config of configs) {
      const problem = deploymentProblem(config)!;
      for (const secret of secrets) expect(problem).not.toContain(secret);
    }
  });

  it("cachedDeploymentProblem follows a change of configuration", () => {
    expect(cachedDeploymentProblem(GOOD)).toBeNull();
    expect(cachedDeploymentProblem({ ...GOOD, ROOT_TOKEN: "change-me-root-token" })).toMatch(/^ROOT_TOKEN/);
    expect(cachedDeploymentProblem({ ...GOOD })).toBeNull();
  });
});
