/**
 * Decision B20: Workers Logs stay on (the access lines), Cloudflare's automatic invocation
 * logs (one entry per request with its full URL, which may carry a credential) are off.
 * Read with wrangler's own config reader, as a deploy reads it.
 */

import { describe, expect, it } from "vitest";
import { unstable_readConfig } from "wrangler";
import { wranglerConfigPath } from "../../support/wrangler-config";

describe("wrangler.jsonc observability (B20)", () => {
  it("keeps Workers Logs and turns off invocation logs", () => {
    const config = unstable_readConfig({ config: wranglerConfigPath });
    expect(config.observability?.enabled).toBe(true);
    expect(config.observability?.logs?.invocation_logs).toBe(false);
  });
});
