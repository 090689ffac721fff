/**
 * Colyseus's Redis driver (`@colyseus/redis-driver` 0.18.3) with one fix: it shares a pending
 * `HGETALL roomcaches` between concurrent queries and forgets it only when it succeeds, so a query
 * that failed while Redis was down stayed cached and every later matchmaking request failed with
 * the same error after Redis was back. Here a failed query is forgotten too.
 */
import { RedisDriver } from "@colyseus/redis-driver";

interface DriverInternals {
  _concurrentRoomCacheRequest?: Promise<unknown>;
  _roomCacheRequestByName: Record<string, Promise<unknown> | undefined>;
  getRooms: (this: DriverInternals, roomName?: string) => Promise<unknown[]>;
}

export class ResilientRedisDriver extends RedisDriver {
  static {
    const proto = RedisDriver.prototype as unknown as DriverInternals;
    const original = proto.getRooms;
    if (typeof original !== "function") throw new Error("@colyseus/redis-driver: getRooms not found (check the pinned version)");
    (ResilientRedisDriver.prototype as unknown as DriverInternals).getRooms = function (this: DriverInternals, roomName?: string) {
      const request = original.call(this, roomName);
      request.catch(() => {
        // The same failed request may be cached under the name and as the shared HGETALL.
        if (this._roomCacheRequestByName[roomName as string] === request) delete this._roomCacheRequestByName[roomName as string];
        this._concurrentRoomCacheRequest = undefined;
      });
      return request;
    };
  }
}
