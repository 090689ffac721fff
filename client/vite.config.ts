// Vite builds the client into client/dist (docs/client.md "Build and serve"); the server serves it.
import { resolve } from "node:path";
import { defineConfig } from "vite";

export default defineConfig({
  root: import.meta.dirname,
  base: "/",
  build: {
    outDir: "dist",
    emptyOutDir: true,
    rollupOptions: { input: { main: resolve(import.meta.dirname, "index.html"), admin: resolve(import.meta.dirname, "admin.html") } },
  },
});
