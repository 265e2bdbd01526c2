import { describe, expect, it } from "vitest";
import { checkFetchableUrl, isLoopbackHost } from "../../../../src/lib/net/bounded-fetch";

describe("URLs a configuration may name (S25)", () => {
  it("takes https anywhere and http only on loopback", () => {
    expect(checkFetchableUrl("https://token.actions.githubusercontent.com")).toBeNull();
    expect(checkFetchableUrl("http://127.0.0.1:8080/keys")).toBeNull();
    expect(checkFetchableUrl("http://localhost/keys")).toBeNull();
    expect(checkFetchableUrl("http://[::1]:9000/keys")).toBeNull();
    expect(checkFetchableUrl("http://example.com/keys")).not.toBeNull();
    expect(checkFetchableUrl("http://127.0.0.1.nip.io/keys")).not.toBeNull();
    expect(checkFetchableUrl("ftp://example.com")).not.toBeNull();
    expect(checkFetchableUrl("not a url")).toBe("not a valid URL");
    expect(isLoopbackHost("127.255.0.1")).toBe(true);
  });
});
