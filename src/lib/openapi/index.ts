/**
 * OpenAPI 3.1 object model and path helpers shared by both wings' document builders and
 * by the tests that check answers against the served documents (decision B14).
 */
export * from "./paths";
export * from "./types";
