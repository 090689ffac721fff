/**
 * PM2 (https://pm2.keymetrics.io, the process manager the Colyseus docs use): N processes of the
 * compiled server on one machine, one port and one public address each, one Redis and one
 * database for all (docs/operations.md "Scaling: several processes and machines"). PM2 is an optional tool,
 * not a dependency of the server: install it yourself (`npm install -g pm2@7.0.4`), build
 * (`npm run build`), then
 *
 *   REDIS_URL=redis://127.0.0.1:6379 DATABASE_URL=postgres://… JWT_SECRET=… ADMIN_CODE=… \
 *     REALM_PROCESSES=2 pm2 start ecosystem.config.cjs
 *
 * Settings of this file (every other variable of the environment, e.g. NODE_ENV, DB_POOL_MAX,
 * TRUST_PROXY, is passed to every process unchanged; docs/operations.md "Settings"):
 *   REALM_PROCESSES     how many processes (default 2; about one per core)
 *   REALM_BASE_PORT     the first process's PORT; the next ones take the following ports (default 5555)
 *   REALM_PUBLIC_WS     the public WebSocket URL pattern, `{port}` replaced by each process's port
 *                       (default ws://127.0.0.1:{port}/ws); behind a proxy that routes by path, e.g.
 *                       wss://game.example/p{port}/ws
 *   REALM_WORLDS        the worlds of each process, `;` between processes (e.g. `1,2;3`), given to
 *                       each as WORLDS (left unset when absent)
 *
 * Each process runs through scripts/run.mjs under the project's Node 22 (node_modules/.bin/node),
 * with the flags of package.json `config.nodeOptions`, exactly as `npm run start:prod`.
 */
// A CommonJS file (PM2 reads `module.exports`): require is the way to import here.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { existsSync } = require("node:fs");
// eslint-disable-next-line @typescript-eslint/no-require-imports
const path = require("node:path");

const count = Number(process.env.REALM_PROCESSES ?? 2);
const basePort = Number(process.env.REALM_BASE_PORT ?? 5555);
const publicWs = process.env.REALM_PUBLIC_WS ?? "ws://127.0.0.1:{port}/ws";
const worlds = process.env.REALM_WORLDS?.split(";");
if (!Number.isInteger(count) || count < 1) throw new Error("REALM_PROCESSES must be a positive integer");
if (!Number.isInteger(basePort) || basePort < 1 || basePort + count > 65536) throw new Error("REALM_BASE_PORT must be a port");
if (worlds && worlds.length !== count) throw new Error(`REALM_WORLDS lists ${worlds.length} processes, REALM_PROCESSES is ${count}`);

const node22 = path.join(__dirname, "node_modules", ".bin", process.platform === "win32" ? "node.cmd" : "node");

module.exports = {
  apps: Array.from({ length: count }, (_, i) => {
    const port = basePort + i;
    return {
      name: `realm-${i + 1}`,
      cwd: __dirname,
      script: "scripts/run.mjs",
      args: "dist/src/main.js",
      interpreter: existsSync(node22) ? node22 : "node",
      // One process per entry, never PM2's cluster mode: each Colyseus process has its own port.
      exec_mode: "fork",
      instances: 1,
      // The server stops gracefully within 10 s of SIGINT/SIGTERM (docs/persistence.md "Shutdown").
      kill_timeout: 12_000,
      // A process that dies is started again; its players reconnect (docs/operations.md "When a process dies").
      autorestart: true,
      restart_delay: 1_000,
      env: {
        PORT: String(port),
        PUBLIC_WS_URL: publicWs.replaceAll("{port}", String(port)),
        ...(worlds ? { WORLDS: worlds[i] } : {}),
      },
    };
  }),
};
