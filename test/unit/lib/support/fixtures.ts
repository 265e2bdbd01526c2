/**
 * Access to the committed SSH fixtures (test/fixtures/ssh, made by make-fixtures.sh) and a
 * seeded PRNG for fuzz tests. Shared by test/unit/lib and test/interop/lib.
 */

import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fromBase64 } from "../../../../src/lib/bytes";

/** Absolute path of test/fixtures/ssh. */
export const FIXTURE_DIR = path.resolve(import.meta.dirname, "../../../fixtures/ssh");

/** Text of a fixture file, e.g. `keys/ed25519.pub`. */
export function fixtureText(relative: string): string {
  return readFileSync(path.join(FIXTURE_DIR, relative), "utf8");
}

/** File names in a fixture folder matching `pattern`, sorted. */
export function fixtureNames(folder: "keys" | "certs" | "encrypted", pattern: RegExp = /./): string[] {
  return readdirSync(path.join(FIXTURE_DIR, folder))
    .filter((f) => pattern.test(f))
    .sort();
}

/** Names of private key fixtures in keys/ (files that have a matching .pub and are not .pub). */
export function privateKeyFixtureNames(): string[] {
  const all = new Set(fixtureNames("keys"));
  return [...all].filter((f) => !f.endsWith(".pub") && all.has(`${f}.pub`)).sort();
}

/** The base64-decoded blob of a one-line `type base64 [comment]` file. */
export function blobOfLine(line: string): Uint8Array {
  const b64 = line.trim().split(" ")[1];
  if (!b64) throw new Error(`not a key line: ${line}`);
  return fromBase64(b64);
}

/** The blob of keys/NAME.pub. */
export function publicKeyFixture(name: string): Uint8Array {
  return blobOfLine(fixtureText(`keys/${name}.pub`));
}

/** The blob of certs/NAME (a `*-cert.pub`). */
export function certificateFixture(name: string): Uint8Array {
  return blobOfLine(fixtureText(`certs/${name}`));
}

/** Small deterministic PRNG (mulberry32) so fuzz failures reproduce. */
export function seededRandom(seed: number): { next(): number; int(max: number): number; bytes(n: number): Uint8Array } {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (max: number) => Math.floor(next() * max),
    bytes: (n: number) => Uint8Array.from({ length: n }, () => Math.floor(next() * 256)),
  };
}
