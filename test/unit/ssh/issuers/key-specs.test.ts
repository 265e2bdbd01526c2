/** Key generation parameters: config/ca (Vault's path_config_ca.go) and issue (decision S10). */
import { describe, expect, it } from "vitest";
import { caKeySpec, issueKeySpec, sshKeyTypeOf } from "../../../../src/ssh/issuers/key-specs";

describe("caKeySpec", () => {
  it.each([
    ["ssh-rsa", 0, { kind: "rsa", bits: 4096 }],
    ["rsa", 3072, { kind: "rsa", bits: 3072 }],
    ["rsa", 2176, { kind: "rsa", bits: 2176 }],
    ["ec", 0, { kind: "ec", bits: 256 }],
    ["ec", 521, { kind: "ec", bits: 521 }],
    ["ecdsa-sha2-nistp384", 1, { kind: "ec", bits: 384 }],
    ["ed25519", 99, { kind: "ed25519", bits: 0 }],
  ] as const)("%s/%i → %j", (type, bits, spec) => {
    expect(caKeySpec(type, bits)).toEqual(spec);
  });
  it.each([
    ["foo", 0, "unknown ssh key pair algorithm: foo"],
    ["ssh-rsa", 1024, "refusing to generate weak ssh-rsa key: 1024 bits < 2048 bits"],
    ["ssh-rsa", -1, "refusing to generate weak ssh-rsa key: -1 bits < 2048 bits"],
    ["rsa", 2049, "refusing to generate rsa key of 2049 bits"],
    ["rsa", 3000, "refusing to generate rsa key of 3000 bits: the size must be a multiple of 128 from 2048 to 8192"],
    ["rsa", 16384, "refusing to generate rsa key of 16384 bits"],
    ["ec", 100, "unknown ECDSA key pair algorithm and bits: ec / 100"],
  ] as const)("%s/%i → %s", (type, bits, message) => {
    expect(() => caKeySpec(type, bits)).toThrow(message);
  });
});

describe("issueKeySpec (S10)", () => {
  it.each([
    ["rsa", 0, { kind: "rsa", bits: 2048 }],
    ["rsa", 4096, { kind: "rsa", bits: 4096 }],
    ["ec", 0, { kind: "ec", bits: 256 }],
    ["ssh-ed25519", 7, { kind: "ed25519", bits: 0 }],
  ] as const)("%s/%i → %j", (type, bits, spec) => {
    expect(issueKeySpec(type, bits)).toEqual(spec);
  });
  it.each([
    ["rsa", 3000],
    ["rsa", 8192],
    ["rsa", 1024],
    ["ec", 512],
    ["dsa", 0],
  ] as const)("%s/%i is refused", (type, bits) => {
    expect(() => issueKeySpec(type, bits)).toThrow();
  });
  it("names the SSH key type", () => {
    expect(sshKeyTypeOf({ kind: "ec", bits: 521 })).toBe("ecdsa-sha2-nistp521");
    expect(sshKeyTypeOf({ kind: "rsa", bits: 2048 })).toBe("ssh-rsa");
  });
});
