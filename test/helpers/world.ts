/** A real `World` with no storage behind it, for tests of the simulation: shared with the interest benchmark (loadtest/lib/world.ts). */
export { OPEN_SPOT, worldWithoutStorage } from "../../loadtest/lib/world.js";
