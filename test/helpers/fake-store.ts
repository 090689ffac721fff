/** The shared in-memory `CharacterStore` of the tests and the in-process benchmarks (loadtest/lib/fake-store.ts). */
export { FakeCharacterStore, type FakeDeath } from "../../loadtest/lib/fake-store.js";
