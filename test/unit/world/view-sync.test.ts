/**
 * rooms/world/views.ts refreshView: a client's StateView follows what its player can see, and an
 * entity visible before its schema object exists (a player still joining) is added once it does;
 * a collection kept off the crowd's turn is left as it is.
 */
import assert from "node:assert/strict";
import type { StateView } from "@colyseus/schema";
import { refreshView, type SchemaMirror, type SdkVisibility } from "../../../rooms/world/views.js";
import type { Player } from "../../../src/world/player.js";
import type { SelectionCadence, VisibleSet, World } from "../../../src/world/world.js";

describe("view sync (refreshView)", () => {
  /** A world whose visible players are `ids`, a mirror holding `mirrored`, and a StateView as a set. */
  function fixture(ids: string[], mirrored: Set<string>) {
    const world = {
      visibleFor: (_p: Player, out?: VisibleSet) => {
        const v = out ?? { players: new Set<string>(), npcs: new Set<string>(), resources: new Set<string>(), groundItems: new Set<string>() };
        for (const s of Object.values(v)) s.clear();
        for (const id of ids) v.players.add(id);
        return v;
      },
    } as unknown as World;
    const objects = new Map<string, object>();
    const mirror = {
      get: (_kind: string, id: string) => {
        if (!mirrored.has(id)) return undefined;
        if (!objects.has(id)) objects.set(id, { id });
        return objects.get(id);
      },
    } as unknown as SchemaMirror;
    const held = new Set<object>();
    const view = {
      add: (o: object) => held.add(o),
      has: (o: object) => held.has(o),
      remove: (o: object) => held.delete(o),
    } as unknown as StateView;
    const ids_ = () => [...held].map((o) => (o as { id: string }).id).sort();
    return { world, mirror, view, ids: ids_ };
  }

  it("adds what came into view and removes what left", () => {
    const visible = ["a", "b"];
    const f = fixture(visible, new Set(["a", "b", "c"]));
    const seen: SdkVisibility = {};
    refreshView(f.world, f.mirror, f.view, seen, {} as Player);
    assert.deepEqual(f.ids(), ["a", "b"]);
    visible.splice(0, 2, "b", "c");
    refreshView(f.world, f.mirror, f.view, seen, {} as Player);
    assert.deepEqual(f.ids(), ["b", "c"]);
  });

  it("a visible player without a schema object yet is added on a later refresh, once mirrored", () => {
    const mirrored = new Set(["a"]);
    const f = fixture(["a", "joining"], mirrored);
    const seen: SdkVisibility = {};
    refreshView(f.world, f.mirror, f.view, seen, {} as Player);
    assert.deepEqual(f.ids(), ["a"]);
    mirrored.add("joining");
    refreshView(f.world, f.mirror, f.view, seen, {} as Player);
    assert.deepEqual(f.ids(), ["a", "joining"]);
  });

  it("a collection kept off the crowd's turn is left as it is: nothing added or removed", () => {
    const f = fixture(["a", "b"], new Set(["a", "b", "c"]));
    const seen: SdkVisibility = {};
    refreshView(f.world, f.mirror, f.view, seen, {} as Player);
    assert.deepEqual(f.ids(), ["a", "b"]);
    // The world kept the players' set off the viewer's turn (it hands back the previous Set object).
    f.world.visibleFor = (_p: Player, out?: VisibleSet, prev?: VisibleSet, cadence?: SelectionCadence) => {
      const v = out ?? { players: new Set<string>(), npcs: new Set<string>(), resources: new Set<string>(), groundItems: new Set<string>() };
      for (const set of Object.values(v)) set.clear();
      [v.players, prev!.players] = [prev!.players, v.players];
      cadence!.kept.players = true;
      return v;
    };
    refreshView(f.world, f.mirror, f.view, seen, {} as Player);
    assert.deepEqual(f.ids(), ["a", "b"]);
    assert.deepEqual([...seen.visible!.players].sort(), ["a", "b"]);
  });
});
