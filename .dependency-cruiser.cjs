// Layer check (dependency-cruiser), run by `npm run lint`. The layers are described in
// docs/architecture.md "Layer rules"; each rule below names the one it enforces.
/** @type {import("dependency-cruiser").IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "domain-is-pure",
      comment: "src/domain holds the game rules: it imports only src/domain and zod (no Node built-ins, no other package, no other layer).",
      severity: "error",
      from: { path: "^src/domain/" },
      to: { pathNot: ["^src/domain/", "^node_modules/zod/"] },
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
        "src/net (sockets) and src/http (Express) are sibling transports: src/net uses no code of src/http. A type-only import is allowed (an object built by the composition root and passed in).",
      severity: "error",
      from: { path: "^src/net/" },
      to: { path: "^src/http/", dependencyTypesNot: ["type-only"] },
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
