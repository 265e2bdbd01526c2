/**
 * PEM armour (RFC 7468 textual encoding, plus the RFC 1421 headers that OpenSSL's legacy
 * encrypted keys carry, e.g. `Proc-Type: 4,ENCRYPTED`). Pure text ↔ bytes.
 */

import { fromBase64, toBase64 } from "../bytes";
import { WireError } from "../sshwire/errors";

/** One PEM block. */
export interface PemBlock {
  /** The label between `BEGIN ` and the dashes, e.g. `RSA PRIVATE KEY`. */
  readonly label: string;
  /** RFC 1421 headers (`Proc-Type`, `DEK-Info`), if any. */
  readonly headers: Readonly<Record<string, string>>;
  /** The decoded body. */
  readonly body: Uint8Array;
}

const BEGIN = /^-----BEGIN ([A-Z0-9 ]+)-----$/;
const END = /^-----END ([A-Z0-9 ]+)-----$/;

/**
 * Parses every PEM block in `text` (text outside blocks is ignored, as OpenSSL does).
 * @throws WireError `INVALID_ENCODING` for an unterminated block, mismatched labels or bad base64
 */
export function parsePem(text: string): PemBlock[] {
  const lines = text.split(/\r?\n/).map((l) => l.trim());
  const blocks: PemBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const begin = BEGIN.exec(lines[i]!);
    if (!begin) continue;
    const label = begin[1]!;
    const headers: Record<string, string> = {};
    let b64 = "";
    let j = i + 1;
    let inHeaders = true;
    for (; j < lines.length; j++) {
      const line = lines[j]!;
      const end = END.exec(line);
      if (end) {
        if (end[1] !== label) throw new WireError("INVALID_ENCODING", `PEM block "${label}" ends with "${end[1]}"`);
        break;
      }
      if (inHeaders) {
        // `:(.*)` then trimStart: `:\s*(.*)` backtracks quadratically over a run of spaces (B9).
        const h = /^([A-Za-z0-9-]+):(.*)$/.exec(line);
        if (h) {
          headers[h[1]!] = h[2]!.trimStart();
          continue;
        }
        inHeaders = false;
        if (line === "") continue;
      }
      b64 += line;
    }
    if (j >= lines.length) throw new WireError("INVALID_ENCODING", `PEM block "${label}" has no END line`);
    let body: Uint8Array;
    try {
      body = fromBase64(b64);
    } catch {
      throw new WireError("INVALID_ENCODING", `PEM block "${label}" is not valid base64`);
    }
    blocks.push({ label, headers, body });
    i = j;
  }
  return blocks;
}

/**
 * Writes one PEM block with a trailing newline. OpenSSL wraps at 64 columns, OpenSSH's
 * `OPENSSH PRIVATE KEY` at 70.
 */
export function formatPem(label: string, body: Uint8Array, lineLength = 64): string {
  const b64 = toBase64(body);
  let out = `-----BEGIN ${label}-----\n`;
  for (let i = 0; i < b64.length; i += lineLength) out += `${b64.slice(i, i + lineLength)}\n`;
  return `${out}-----END ${label}-----\n`;
}
