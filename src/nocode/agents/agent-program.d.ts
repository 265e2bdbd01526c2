/** The agent program (decision N21), bundled as a text module by wrangler.jsonc's `rules`. */
declare module "*/keyway-agent" {
  const text: string;
  export default text;
}
