/**
 * Text files that make OpenSSH trust CA keys (decision S21): a `TrustedUserCAKeys` file
 * (sshd_config(5): one public key a line, in authorized_keys format) and `known_hosts`
 * `@cert-authority` lines (sshd(8) "SSH_KNOWN_HOSTS FILE FORMAT": marker, comma-separated
 * host patterns, key). Pure: no bindings.
 */

/** The first two fields of a stored public key line (type and base64), without any comment. */
function keyFields(publicKeyText: string): string {
  // Split on single white-space characters and drop the empty fields (no quantifier on input).
  const [type, data] = publicKeyText
    .trim()
    .split(/\s/)
    .filter((field) => field !== "");
  return data === undefined ? (type ?? "") : `${type} ${data}`;
}

/** A `TrustedUserCAKeys` file: each key on its own line, in the order given. */
export function trustedUserCaKeysFile(publicKeys: string[]): string {
  return publicKeys.map((k) => `${keyFields(k)}\n`).join("");
}

/** Hostname shape S21 accepts for known_hosts: letters, digits, `-` and `.`, 1–253 characters. */
const HOSTNAME = /^[A-Za-z0-9.-]{1,253}$/;

/** Is `domain` a hostname S21 accepts (so it cannot inject patterns, markers or lines)? */
export function isKnownHostsDomain(domain: string): boolean {
  return HOSTNAME.test(domain);
}

/**
 * `known_hosts` lines trusting each key as a host CA for `domain` and its subdomains:
 * `@cert-authority *.D,D <key>`. The caller validates `domain` with isKnownHostsDomain.
 */
export function knownHostsFile(domain: string, publicKeys: string[]): string {
  return publicKeys.map((k) => `@cert-authority *.${domain},${domain} ${keyFields(k)}\n`).join("");
}
