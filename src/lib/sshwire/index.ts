/**
 * SSH wire format: pure, strict encoders and decoders for public keys, certificates,
 * signatures and openssh-key-v1 private keys. Bytes only: no Workers, Hono or Node imports,
 * no WebCrypto (see `src/lib/crypto` for the adapters that sign and verify).
 */

export * from "./certificate";
export * from "./ec-point";
export * from "./errors";
export * from "./key-types";
export * from "./krl";
export * from "./openssh-private-key";
export * from "./public-key";
export * from "./reader";
export * from "./signature";
export * from "./writer";
