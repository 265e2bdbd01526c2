/**
 * Trust files of decision S21: a TrustedUserCAKeys file and known_hosts `@cert-authority`
 * lines, and the hostname check that keeps a caller's domain from adding patterns, markers
 * or lines.
 */
import { describe, expect, it } from "vitest";
import { isKnownHostsDomain, knownHostsFile, trustedUserCaKeysFile } from "../../../../src/lib/sshwire/trust-files";

const ED = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIN4GJjWbG2tmZS4x/E5OfCFT48I5TQOFux8hNNrr39t/";
const EC = "ecdsa-sha2-nistp256 AAAAE2VjZHNhLXNoYTItbmlzdHAyNTYAAAAIbmlzdHAyNTY=";

describe("trustedUserCaKeysFile", () => {
  it("lists each key on its own line, in order, without comments or surrounding space", () => {
    expect(trustedUserCaKeysFile([`${ED} old-ca\n`, `  ${EC}\n`])).toBe(`${ED}\n${EC}\n`);
    expect(trustedUserCaKeysFile([])).toBe("");
  });
});

describe("knownHostsFile", () => {
  it("trusts each key as a host CA for the domain and its subdomains", () => {
    expect(knownHostsFile("example.com", [`${ED} c\n`, EC])).toBe(
      `@cert-authority *.example.com,example.com ${ED}\n@cert-authority *.example.com,example.com ${EC}\n`,
    );
  });
});

describe("isKnownHostsDomain", () => {
  it("accepts hostnames of letters, digits, '-' and '.' up to 253 characters", () => {
    for (const d of ["example.com", "a", "host-1.example.co.uk", "10.0.0.1", "x".repeat(253)])
      expect(isKnownHostsDomain(d)).toBe(true);
  });
  it("refuses anything that could add a pattern, a marker, a field or a line", () => {
    for (const d of [
      "",
      "*.example.com",
      "a,b",
      "a b",
      "a\nb",
      "!neg",
      "[h]:22",
      "@cert-authority",
      "x".repeat(254),
      "é.com",
    ]) {
      expect(isKnownHostsDomain(d)).toBe(false);
    }
  });
});
