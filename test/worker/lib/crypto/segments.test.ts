/**
 * The segment format of run data at rest (decision N20 "At rest", src/lib/crypto/segments.ts):
 * round trips at every size around the segment boundary, and refusal of any segment altered,
 * reordered, dropped or cut off, or of another key.
 */
import { describe, expect, it } from "vitest";
import {
  decryptBytes,
  encryptBytes,
  encryptedLength,
  importDataKey,
  newDataKey,
  SEGMENT_SIZE,
  SegmentError,
} from "../../../../src/lib/crypto/segments";

const HEADER = 12;
const SEALED = SEGMENT_SIZE + 16;

function noise(length: number): Uint8Array {
  const out = new Uint8Array(length);
  for (let i = 0; i < length; i += 65_536) crypto.getRandomValues(out.subarray(i, Math.min(length, i + 65_536)));
  return out;
}

describe("segment encryption (N20)", () => {
  it("round-trips every size around the segment boundary, with the documented length", async () => {
    const key = await importDataKey(newDataKey());
    for (const size of [
      0,
      1,
      SEGMENT_SIZE - 1,
      SEGMENT_SIZE,
      SEGMENT_SIZE + 1,
      2 * SEGMENT_SIZE,
      3 * SEGMENT_SIZE + 7,
    ]) {
      const plain = noise(size);
      const sealed = await encryptBytes(key, plain);
      expect(sealed.length, `size ${size}`).toBe(encryptedLength(size));
      expect(await decryptBytes(key, sealed)).toEqual(plain);
    }
  });

  it("never repeats a ciphertext: a fresh nonce prefix per object", async () => {
    const key = await importDataKey(newDataKey());
    const plain = noise(100);
    expect(await encryptBytes(key, plain)).not.toEqual(await encryptBytes(key, plain));
  });

  it("refuses segments reordered", async () => {
    const key = await importDataKey(newDataKey());
    const sealed = await encryptBytes(key, noise(3 * SEGMENT_SIZE + 5));
    const swapped = new Uint8Array(sealed);
    swapped.set(sealed.subarray(HEADER + SEALED, HEADER + 2 * SEALED), HEADER);
    swapped.set(sealed.subarray(HEADER, HEADER + SEALED), HEADER + SEALED);
    await expect(decryptBytes(key, swapped)).rejects.toBeInstanceOf(SegmentError);
  });

  it("refuses an object truncated at a segment boundary, or within a segment", async () => {
    const key = await importDataKey(newDataKey());
    const sealed = await encryptBytes(key, noise(2 * SEGMENT_SIZE + 100));
    await expect(decryptBytes(key, sealed.subarray(0, HEADER + 2 * SEALED))).rejects.toBeInstanceOf(SegmentError);
    await expect(decryptBytes(key, sealed.subarray(0, HEADER + SEALED))).rejects.toBeInstanceOf(SegmentError);
    await expect(decryptBytes(key, sealed.subarray(0, sealed.length - 1))).rejects.toBeInstanceOf(SegmentError);
    await expect(decryptBytes(key, sealed.subarray(0, HEADER))).rejects.toBeInstanceOf(SegmentError);
  });

  it("refuses a segment dropped from the middle, an altered byte, another key, a foreign header", async () => {
    const key = await importDataKey(newDataKey());
    const sealed = await encryptBytes(key, noise(3 * SEGMENT_SIZE));
    const dropped = new Uint8Array(sealed.length - SEALED);
    dropped.set(sealed.subarray(0, HEADER + SEALED), 0);
    dropped.set(sealed.subarray(HEADER + 2 * SEALED), HEADER + SEALED);
    await expect(decryptBytes(key, dropped)).rejects.toBeInstanceOf(SegmentError);
    const altered = new Uint8Array(sealed);
    altered[HEADER + SEALED + 10]! ^= 1;
    await expect(decryptBytes(key, altered)).rejects.toBeInstanceOf(SegmentError);
    await expect(decryptBytes(await importDataKey(newDataKey()), sealed)).rejects.toBeInstanceOf(SegmentError);
    const foreign = new Uint8Array(sealed);
    foreign[0] = 0;
    await expect(decryptBytes(key, foreign)).rejects.toBeInstanceOf(SegmentError);
  });

  it("refuses a last segment presented as a middle one (a longer object spliced from two)", async () => {
    const key = await importDataKey(newDataKey());
    const one = await encryptBytes(key, noise(SEGMENT_SIZE));
    const spliced = new Uint8Array(one.length + SEALED);
    spliced.set(one, 0);
    spliced.set(one.subarray(HEADER), one.length);
    await expect(decryptBytes(key, spliced)).rejects.toBeInstanceOf(SegmentError);
  });
});
