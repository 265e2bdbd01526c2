/**
 * `allowed_user_key_lengths`: parsing the role field and the sign/issue checks
 * (Vault's path_roles.go, path_issue_sign.go and path_issue.go).
 */
import { describe, expect, it } from "vitest";
import {
  checkIssueKey,
  checkSubjectKey,
  KeyLengthError,
  NotAMapError,
  parseAllowedUserKeyLengths,
} from "../../../../src/ssh/roles/key-lengths";

describe("parseAllowedUserKeyLengths", () => {
  it.each([
    [{ rsa: 2048 }, { rsa: [2048] }],
    [{ rsa: "2048" }, { rsa: [2048] }],
    [{ rsa: "2048, 4096" }, { rsa: [2048, 4096] }],
    [{ rsa: [2048, "3072"] }, { rsa: [2048, 3072] }],
    [{ ed25519: "" }, { ed25519: [0] }],
    [[{ rsa: 2048 }, { ec: 256 }], { rsa: [2048], ec: [256] }],
    [null, {}],
    ["", {}],
  ])("%j → %j", (input, expected) => {
    expect(parseAllowedUserKeyLengths(input)).toEqual(expected);
  });

  it("refuses values that are not integers", () => {
    expect(() => parseAllowedUserKeyLengths({ rsa: "big" })).toThrow(KeyLengthError);
    expect(() => parseAllowedUserKeyLengths({ rsa: 1.5 })).toThrow(KeyLengthError);
    expect(() => parseAllowedUserKeyLengths({ rsa: true })).toThrow(KeyLengthError);
    expect(() => parseAllowedUserKeyLengths({ rsa: { a: 1 } })).toThrow(KeyLengthError);
  });

  it("refuses a value that is not a map", () => {
    expect(() => parseAllowedUserKeyLengths([2048])).toThrow(NotAMapError);
    expect(() => parseAllowedUserKeyLengths("rsa")).toThrow(NotAMapError);
  });
});

describe("checkSubjectKey (sign)", () => {
  const rsa = (bits: number) => ({ type: "ssh-rsa", bits });
  it("skips an empty map", () => {
    expect(() => checkSubjectKey({}, rsa(1024))).not.toThrow();
  });
  it("matches RSA sizes exactly, under rsa or ssh-rsa", () => {
    expect(() => checkSubjectKey({ rsa: [2048] }, rsa(2048))).not.toThrow();
    expect(() => checkSubjectKey({ "ssh-rsa": [4096] }, rsa(2048))).toThrow("key is of an invalid size: 2048");
    expect(() => checkSubjectKey({ ed25519: [0] }, rsa(2048))).toThrow("key of type rsa is not allowed");
  });
  it("checks ec/ecdsa entries by curve size; curve names pass with any value", () => {
    const p384 = { type: "ecdsa-sha2-nistp384", bits: 384 };
    expect(() => checkSubjectKey({ ecdsa: [384] }, p384)).not.toThrow();
    expect(() => checkSubjectKey({ ec: [256] }, p384)).toThrow("key is of an invalid size: 384");
    expect(() => checkSubjectKey({ "ecdsa-sha2-nistp384": [1] }, p384)).not.toThrow();
    expect(() => checkSubjectKey({ "ecdsa-sha2-nistp384": [] }, p384)).toThrow("key is of an invalid size: 384");
  });
  it("refuses FIDO keys as Vault does", () => {
    expect(() => checkSubjectKey({ ed25519: [0] }, { type: "sk-ssh-ed25519@openssh.com", bits: 256 })).toThrow(
      "pubkey not suitable for crypto (expected ssh.CryptoPublicKey but found *ssh.skEd25519PublicKey)",
    );
  });
});

describe("checkIssueKey (issue)", () => {
  it("uses Vault's issue messages", () => {
    expect(() => checkIssueKey({ rsa: [2048] }, { type: "ssh-ed25519", bits: 0 })).toThrow(
      "provided key_type value not in allowed_user_key_types",
    );
    expect(() => checkIssueKey({ rsa: [2048] }, { type: "ssh-rsa", bits: 4096 })).toThrow(
      "provided key_bits value not in list of role's allowed_user_key_types",
    );
    expect(() => checkIssueKey({ rsa: [2048] }, { type: "ssh-rsa", bits: 2048 })).not.toThrow();
  });
});
