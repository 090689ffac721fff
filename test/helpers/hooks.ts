/** Root hooks: close the shared storages once every test has run. */
import { closeSharedStorage } from "./storage.js";

export const mochaHooks = {
  async afterAll() {
    await closeSharedStorage();
  },
};
