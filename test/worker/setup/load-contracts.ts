import { servedContracts } from "../../helpers/worker-request";

// Decision B14: fetch the served OpenAPI documents before the file's tests start, so the
// fetch (and its access-log line) happens outside any test that watches the Worker's logs.
await servedContracts();
