// Preloaded into Portkey's gateway (node --require ./preload.cjs) so that
// its streams work on Node 20 as published, without a change to its code.
//
// For a streamed answer Portkey wraps the provider's fetch Response as
// new Response(stream, upstream) (build/start-server.js: Cd, minified),
// then appends its x-portkey-* headers to the result (updateHeaders, in
// the stack of the error). @hono/node-server has replaced the global
// Response with its lightweight one, which, given a fetch Response as
// init, keeps init.headers as is: the fetch Response's Headers, whose
// guard is "immutable". So append throws "TypeError: immutable" and every
// stream ends in a 500 "Something went wrong". Here a streamed answer's
// fetch Response gets a mutable copy of its headers as its own headers
// property; its body, and every answer that is not a stream, are left
// as they are.
"use strict";
const upstreamFetch = globalThis.fetch;
globalThis.fetch = async function fetch(...args) {
  const res = await upstreamFetch.apply(this, args);
  if (res.headers.get("content-type")?.startsWith("text/event-stream")) {
    Object.defineProperty(res, "headers", { value: new Headers(res.headers) });
  }
  return res;
};
