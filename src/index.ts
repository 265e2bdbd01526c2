export default { fetch() { return new Response("x") } }
