/**
 * node-vault (npm), an unmodified Vault client, against the real Worker (decision S20):
 * it imports issuers, lists `ssh/issuers` and signs through a role bound to a named
 * issuer. Listing uses `noCustomHTTPVerbs`, node-vault's switch to `GET ?list=1`: the
 * `LIST` verb cannot reach a Worker (decision S2).
 */
import NodeVault from "node-vault";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bytesEqual, fromBase64 } from "../../../src/lib/bytes";
import { decodeCertificate } from "../../../src/lib/sshwire/certificate";
import { parsePublicKeyText } from "../../../src/lib/sshwire/public-key";
import { type RunningKeyway, startKeyway } from "../../support/worker";

let keyway: RunningKeyway;
let vault: NodeVault.client;

beforeAll(async () => {
  keyway = await startKeyway({ SSH_MOUNTS: "ssh" });
  vault = NodeVault({ endpoint: keyway.url, token: keyway.rootToken, noCustomHTTPVerbs: true });
});

afterAll(async () => {
  await keyway?.stop();
});

describe("node-vault and the issuer API", () => {
  it("lists ssh/issuers and signs through a role bound to a named issuer", async () => {
    const first = await vault.write("ssh/issuers/import", { key_type: "ed25519" });
    const named = await vault.write("ssh/issuers/import/team-b", { key_type: "ec" });
    expect(named.data.issuer_name).toBe("team-b");

    const list = await vault.list("ssh/issuers");
    expect(list.data.keys).toEqual([first.data.issuer_id, named.data.issuer_id].sort());
    expect(list.data.key_info[first.data.issuer_id].is_default).toBe(true);
    expect(list.data.key_info[named.data.issuer_id]).toMatchObject({ issuer_name: "team-b", is_default: false });

    await vault.write("ssh/roles/team-b", {
      key_type: "ca",
      allow_user_certificates: true,
      allowed_users: "*",
      issuer_ref: "team-b",
    });
    expect((await vault.read("ssh/roles/team-b")).data.issuer_ref).toBe("team-b");
    const roles = await vault.list("ssh/roles");
    expect(roles.data.key_info["team-b"]).toEqual({ key_type: "ca", issuer_ref: "team-b" });

    const subject = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIN4GJjWbG2tmZS4x/E5OfCFT48I5TQOFux8hNNrr39t/ e2e";
    const signed = await vault.write("ssh/sign/team-b", { public_key: subject, valid_principals: "alice" });
    expect(signed.data.issuer_id).toBe(named.data.issuer_id);
    const cert = decodeCertificate(fromBase64(signed.data.signed_key.trim().split(" ")[1]));
    expect(bytesEqual(cert.signatureKey, parsePublicKeyText(named.data.public_key.trim()).blob)).toBe(true);

    // OpenBao's errors reach node-vault as its ApiResponseError with the message.
    await expect(vault.read("ssh/issuer/nope")).rejects.toThrow("unable to find issuer for reference: nope");
  });
});
