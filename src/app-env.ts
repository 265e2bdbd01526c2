/** Hono environment shared by both APIs. */
export type AppEnv = {
  Bindings: Env;
  Variables: {
    /** Per-request id, echoed as `X-Request-Id`, in Vault's `request_id` and in logs. */
    requestId: string;
  };
};
