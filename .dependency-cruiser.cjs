// Layer check (dependency-cruiser), run by `npm run lint` (alone: `npm run lint:layers`). The floors
// and the rules are described in docs/architecture.md "Layers"; each rule below names the one it enforces.

/**
 * The floors, lowest first. A module may import its own floor and the floors below it, never one
 * above (one `<floor>-not-up` rule each, generated below). Files of no floor (scripts/, build
 * tools) are outside the layers.
 */
const FLOORS = [
  { name: "domain", comment: "the game rules, pure", path: ["^src/domain/"] },
  { name: "foundation", comment: "settings, configuration, logger, process lifecycle", path: ["^src/settings/", "^src/(config|logger|lifecycle)\\.ts$"] },
  { name: "payloads", comment: "the protocol's payload schemas (player:sync, world:update, trade events)", path: ["^src/protocol/"] },
  { name: "contract", comment: "the event table: every event, both directions, with its schema; limits; close codes", path: ["^src/events\\.ts$"] },
  {
    name: "resources",
    comment: "metrics registry, storage (ORM, migrations, entities, repositories) and game content",
    path: ["^src/metrics\\.ts$", "^src/storage/", "^entities/", "^src/content/"],
  },
  { name: "auth", comment: "tokens, principals, client addresses and blocks", path: ["^src/auth/"] },
  { name: "world", comment: "the live simulation", path: ["^src/world/"] },
  { name: "features", comment: "trading and the REST-side services, on top of the world", path: ["^src/trade/", "^src/services/"] },
  { name: "sockets", comment: "WebSocket transport: upgrades, the /ws adapter, socket gate, admission", path: ["^src/net/"] },
  { name: "cluster", comment: "bus, leases, Redis, the other processes' worlds", path: ["^src/cluster/"] },
  {
    name: "delivery",
    comment: "what clients talk to: the HTTP app and routes, the Colyseus rooms and their state classes",
    path: ["^src/http/", "^rooms/", "^schema/"],
  },
  { name: "agents", comment: "the MCP endpoint, a client of HTTP and the /ws adapter in process", path: ["^src/mcp/"] },
  { name: "composition", comment: "the wiring: builds every object and the hosted worlds; the entry point", path: ["^src/server/", "^src/main\\.ts$"] },
];

const floorRules = FLOORS.slice(0, -1).map((floor, i) => ({
  name: `${floor.name}-not-up`,
  comment: `${floor.comment}: imports nothing of a higher floor (${FLOORS.slice(i + 1)
    .map((f) => f.name)
    .join(", ")}).`,
  severity: "error",
  from: { path: floor.path },
  // The world's ports (src/world/ports/) are declarations the adapters below implement (storage
  // implements CharacterStore): the one part of a higher floor a lower one may import.
  to: { path: FLOORS.slice(i + 1).flatMap((f) => f.path), pathNot: ["^src/world/ports/"] },
}));

/** @type {import("dependency-cruiser").IConfiguration} */
module.exports = {
  forbidden: [
    ...floorRules,
    {
      name: "domain-is-pure",
      comment: "src/domain holds the game rules: it imports only src/domain and zod (no Node built-ins, no other package, no other layer).",
      severity: "error",
      from: { path: "^src/domain/" },
      to: { pathNot: ["^src/domain/", "^node_modules/zod/"] },
    },
    {
      name: "ports-are-declarations",
      comment:
        "src/world/ports/ declares what the world needs of storage (interfaces, record types, the fence's error): it imports only src/domain and itself, so an adapter that implements it takes nothing else of the world.",
      severity: "error",
      from: { path: "^src/world/ports/" },
      to: { pathNot: ["^src/domain/", "^src/world/ports/"] },
    },
    {
      name: "world-not-transport",
      comment: "src/world is the simulation: it knows nothing of rooms/, src/net, src/http, Express or Colyseus.",
      severity: "error",
      from: { path: "^src/world/" },
      to: { path: ["^rooms/", "^src/net/", "^src/http/", "^node_modules/(@types/)?express/", "^node_modules/@colyseus/"] },
    },
    {
      name: "net-not-rooms",
      comment: "src/net adapts sockets to the world; the Colyseus rooms sit on top of it, not under it.",
      severity: "error",
      from: { path: "^src/net/" },
      to: { path: "^rooms/" },
    },
    {
      name: "net-not-http",
      comment:
        "src/net (sockets) and src/http (Express) are transports on different floors: src/net imports nothing of src/http, not even a type (it declares what it needs, e.g. OriginPolicy).",
      severity: "error",
      from: { path: "^src/net/" },
      to: { path: "^src/http/" },
    },
    {
      name: "cluster-not-rooms",
      comment: "src/cluster keeps the bus, leases and Redis; building the worlds and their rooms is the composition root's (src/server/).",
      severity: "error",
      from: { path: "^src/cluster/" },
      to: { path: ["^rooms/", "^schema/"] },
    },
    {
      name: "content-not-http",
      comment: "src/content loads and checks the game content; its HTTP routes live in src/http (content.ts).",
      severity: "error",
      from: { path: "^src/content/" },
      to: { path: ["^src/http/", "^node_modules/(@types/)?express/"] },
    },
    {
      name: "orm-only-in-storage",
      comment:
        "Only storage imports the ORM (@mikro-orm/*): src/storage (setup, migrations, repositories), entities/ (the entity definitions' decorators) and the build scripts.",
      severity: "error",
      from: { pathNot: ["^src/storage/", "^entities/", "^scripts/"] },
      to: { path: "^node_modules/@mikro-orm/" },
    },
    {
      name: "domain-used",
      comment: "Every src/domain module is used by the server (src/main.ts) or a build script; a rule only tests call is dead or duplicated.",
      severity: "error",
      from: { path: "^(src/main|scripts/[^/]+)\\.ts$" },
      to: { path: "^src/domain/", reachable: false },
    },
    {
      name: "no-circular",
      comment: "No import cycles: each module can be read (and loaded) after the ones it imports.",
      severity: "error",
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    // Type-only imports count: a layer that needs another's types depends on it.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
    },
  },
};
