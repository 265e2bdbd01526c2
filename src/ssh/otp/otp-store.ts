/**
 * The Durable Object that holds one-time passwords (decision S13). Implemented by the
 * OTP service; declared here so the binding exists from the start.
 */
import { DurableObject } from "cloudflare:workers";

export class OtpStore extends DurableObject<Env> {}
