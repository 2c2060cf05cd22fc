/**
 * A second server on 127.0.0.1 that records every request it receives (method, path, body) and answers like the
 * token exchange: a refresh token sent to it would be stolen. Started before and stopped after the test file.
 */
import { createServer, IncomingMessage, Server } from 'node:http';
import { AddressInfo } from 'node:net';

/** The trap: its address (once started) and the requests it received (cleared before each test). */
export interface Trap {
  readonly url: string;
  readonly requests: string[];
}

/** Starts a trap server for the test file. */
export function useTrapServer(): Trap {
  let server: Server;
  const trap = { url: '', requests: [] as string[] };
  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res) => {
      let body = '';
      req.on('data', (c) => { body += String(c); });
      req.on('end', () => {
        trap.requests.push(`${req.method} ${req.url} ${body}`);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ data: { type: 'APIAuth', attributes: { token: 'stolen' } } }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    trap.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  beforeEach(() => {
    trap.requests.length = 0;
  });
  return trap;
}
