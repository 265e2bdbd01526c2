/**
 * node-vault (npm), an unmodified Vault client, signs in to the real Worker with a JWT
 * (decisions S24, S25, S27): it enables a JWT mount, configures it with a JWKS that a
 * loopback server in this process serves (the Worker fetches it over real HTTP), logs in
 * with `jwtLogin` as CI does, and signs an SSH certificate with the token it got. The key
 * then rotates at the provider: the next token, signed by the new key, verifies after one
 * refetch.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import NodeVault from "node-vault";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningKeyway, startKeyway } from "../../support/worker";

let keyway: RunningKeyway;
let root: NodeVault.client;
let jwks: Server;
let served: object[] = [];

async function signer(kid: string) {
  const { privateKey, publicKey } = await generateKeyPair("ES256");
  const jwk = { ...(await exportJWK(publicKey)), kid, use: "sig" };
  const mint = (claims: Record<string, unknown>) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: "ES256", kid })
      .setIssuedAt()
      .setExpirationTime("5m")
      .setIssuer("https://ci.example")
      .setAudience("keyway")
      .sign(privateKey);
  return { jwk, mint };
}

beforeAll(async () => {
  jwks = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ keys: served }));
  });
  await new Promise<void>((resolve) => jwks.listen(0, "127.0.0.1", resolve));
  keyway = await startKeyway({ SSH_MOUNTS: "ssh" });
  root = NodeVault({ endpoint: keyway.url, token: keyway.rootToken, noCustomHTTPVerbs: true });
});

afterAll(async () => {
  await keyway?.stop();
  jwks?.close();
});

describe("node-vault's jwtLogin against a JWT auth mount", () => {
  it("logs in with a CI token, signs with the login's token, and follows a key rotation", async () => {
    const first = await signer("k1");
    served = [first.jwk];
    await root.enableAuth({ mount_point: "ci", type: "jwt", description: "CI runners" });
    const auths = await root.auths();
    expect(auths.data["ci/"].accessor).toMatch(/^auth_jwt_[0-9a-f]{8}$/);
    const { port } = jwks.address() as AddressInfo;
    await root.write("auth/ci/config", {
      jwks_url: `http://127.0.0.1:${port}/keys`,
      bound_issuer: "https://ci.example",
    });
    await root.write("sys/policies/acl/deploy", {
      policy: JSON.stringify({ path: { "ssh/sign/deploy": { capabilities: ["create", "update"] } } }),
    });
    await root.write("auth/ci/role/deploy", {
      role_type: "jwt",
      user_claim: "repository",
      bound_audiences: "keyway",
      bound_claims_type: "glob",
      bound_claims: { job_workflow_ref: "acme/deploy/.github/workflows/*@refs/heads/main" },
      token_policies: "deploy",
      token_ttl: "5m",
    });
    await root.write("ssh/config/ca", { generate_signing_key: true, key_type: "ed25519" });
    await root.write("ssh/roles/deploy", {
      key_type: "ca",
      allow_user_certificates: true,
      allowed_users: "deploy",
      default_user: "deploy",
    });

    const claims = {
      repository: "acme/web",
      job_workflow_ref: "acme/deploy/.github/workflows/prod.yml@refs/heads/main",
    };
    const login = await NodeVault({ endpoint: keyway.url, noCustomHTTPVerbs: true }).jwtLogin({
      mount_point: "ci",
      role: "deploy",
      jwt: await first.mint(claims),
    });
    expect(login.auth).toMatchObject({ policies: ["default", "deploy"], metadata: { role: "deploy" }, orphan: true });
    const ci = NodeVault({ endpoint: keyway.url, token: login.auth.client_token, noCustomHTTPVerbs: true });
    const self = await ci.tokenLookupSelf();
    expect(self.data.display_name).toBe("ci-acme/web");
    const subject = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIN4GJjWbG2tmZS4x/E5OfCFT48I5TQOFux8hNNrr39t/ e2e";
    const signed = await ci.write("ssh/sign/deploy", { public_key: subject });
    expect(signed.data.signed_key).toMatch(/^ssh-ed25519-cert-v01@openssh.com /);

    await expect(
      NodeVault({ endpoint: keyway.url }).jwtLogin({
        mount_point: "ci",
        role: "deploy",
        jwt: await first.mint({ ...claims, job_workflow_ref: "evil/x/.github/workflows/a.yml@refs/heads/main" }),
      }),
    ).rejects.toThrow(
      'error validating claims: claim "job_workflow_ref" does not match any associated bound claim values',
    );

    // The provider rotates keys; after the 30 s cooldown since the last fetch, the new kid refetches once.
    const second = await signer("k2");
    served = [second.jwk];
    await new Promise((r) => setTimeout(r, 31_000));
    const rotated = await NodeVault({ endpoint: keyway.url }).jwtLogin({
      mount_point: "ci",
      role: "deploy",
      jwt: await second.mint(claims),
    });
    expect(rotated.auth.entity_id).toBe(login.auth.entity_id);

    await root.disableAuth({ mount_point: "ci" });
    await expect(ci.tokenLookupSelf()).rejects.toThrow("permission denied");
  }, 120_000);
});
