// A minimal gzip'd ustar archive of regular files, for the no-code benchmarks' module
// version upload (POSIX.1-1988 ustar header; RFC 1952 gzip via node:zlib).
import { gzipSync } from "node:zlib";

function field(header, offset, length, text) {
  header.write(text, offset, Math.min(length, Buffer.byteLength(text)), "ascii");
}

function octal(value, length) {
  return `${value.toString(8).padStart(length - 1, "0")}\0`;
}

/** @param {Record<string,string>} files name → UTF-8 contents (names under 100 bytes) */
export function moduleTarball(files) {
  const blocks = [];
  for (const [name, contents] of Object.entries(files)) {
    const data = Buffer.from(contents, "utf8");
    const header = Buffer.alloc(512);
    field(header, 0, 100, name);
    field(header, 100, 8, octal(0o644, 8));
    field(header, 108, 8, octal(0, 8));
    field(header, 116, 8, octal(0, 8));
    field(header, 124, 12, octal(data.length, 12));
    field(header, 136, 12, octal(Math.floor(Date.now() / 1000), 12));
    field(header, 148, 8, "        "); // checksum computed over spaces
    field(header, 156, 1, "0");
    field(header, 257, 6, "ustar\0");
    field(header, 263, 2, "00");
    let sum = 0;
    for (const byte of header) sum += byte;
    field(header, 148, 8, `${sum.toString(8).padStart(6, "0")}\0 `);
    blocks.push(header, data, Buffer.alloc((512 - (data.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(blocks));
}

/**
 * main.tf of the benchmarks' no-code module: one variable with a default and one
 * `null_resource.<resource>` with its provider (N4, N12), and an `id` output when asked.
 * @param {string} resource
 * @param {{ output?: boolean }} [options]
 */
export function nullResourceModuleMainTf(resource, { output = false } = {}) {
  const main = `terraform {
  required_providers {
    null = {
      source  = "hashicorp/null"
      version = "~> 3.2"
    }
  }
}

variable "size" {
  type        = string
  default     = "small"
  description = "Size label"
}

resource "null_resource" "${resource}" {
  triggers = {
    size = var.size
  }
}
`;
  return output
    ? `${main}
output "id" {
  value = null_resource.${resource}.id
}
`
    : main;
}
