'use strict';
// Preload for third-party Node servers that call listen(PORT) without a host and so
// bind every interface. Load it with `node --require ./bind-loopback.cjs server.js`:
// every TCP listen() that names no host, or a wildcard host (0.0.0.0, ::), is moved
// onto 127.0.0.1. Unix sockets, pipes and handles are left alone.
//
// If INTEROP_ANNOUNCE_PATH is set (e.g. "/mcp"), the first TCP server that starts
// listening prints `listening on http://127.0.0.1:PORT<path>` on stderr, so callers
// can pass PORT=0 and still learn which port was picked.
const net = require('node:net');

const LOOPBACK = '127.0.0.1';
const WILDCARDS = new Set(['', '0.0.0.0', '::', '[::]', '::0']);

function isPort(v) {
  return typeof v === 'number' || (typeof v === 'string' && /^\d+$/.test(v));
}

function forceLoopback(args) {
  if (args.length === 0 || typeof args[0] === 'function') {
    // listen() / listen(cb): random port on all interfaces -> loopback
    return [0, LOOPBACK, ...args];
  }
  const first = args[0];
  if (isPort(first)) {
    // listen(port[, host][, backlog][, cb])
    if (typeof args[1] === 'string') {
      if (WILDCARDS.has(args[1])) args[1] = LOOPBACK;
    } else {
      args.splice(1, 0, LOOPBACK);
    }
    return args;
  }
  if (first && typeof first === 'object' && !Array.isArray(first)) {
    // listen(options[, cb]); leave IPC paths, handles and fds untouched
    if (first.path !== undefined || first.handle !== undefined || first._handle !== undefined || first.fd !== undefined) {
      return args;
    }
    if (first.host === undefined || WILDCARDS.has(first.host)) {
      args[0] = { ...first, host: LOOPBACK };
    }
    return args;
  }
  return args; // listen(path) or listen(handle)
}

const announcePath = process.env.INTEROP_ANNOUNCE_PATH;
let announced = false;
const originalListen = net.Server.prototype.listen;

net.Server.prototype.listen = function listen(...args) {
  const patched = forceLoopback(args);
  if (announcePath !== undefined && !announced) {
    this.once('listening', () => {
      const addr = this.address();
      if (announced || !addr || typeof addr !== 'object') return;
      announced = true;
      process.stderr.write(`listening on http://${LOOPBACK}:${addr.port}${announcePath}\n`);
    });
  }
  return originalListen.apply(this, patched);
};
