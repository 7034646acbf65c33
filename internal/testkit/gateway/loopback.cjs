// Preloaded into Portkey's gateway (node --require ./loopback.cjs) so that
// it listens on 127.0.0.1 only. Its start script takes a port (--port=N)
// but no address, and @hono/node-server's serve then calls
// server.listen(port, undefined, callback): every interface. A listen
// given a port and an undefined address gets 127.0.0.1 here.
"use strict";
const net = require("net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === "number" && args.length > 1 && args[1] === undefined) {
    args[1] = "127.0.0.1";
  }
  return listen.apply(this, args);
};
