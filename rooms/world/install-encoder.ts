/** Putting the interest encoder (interest-encoder.ts) in place of Colyseus's in a room. */
import { SchemaSerializer, type Room } from "@colyseus/core";
import type { Encoder, Schema } from "@colyseus/schema";
import { InterestEncoder } from "./interest-encoder.js";
import type { SchemaClass } from "./schema-fields.js";

/**
 * Put the interest encoder in place of Colyseus's in a room whose state is set (Colyseus sets it, and
 * makes its serializer, before `onCreate`). The serializer keeps everything else; the new encoder
 * takes over the same Root, so every refId already given stays valid.
 */
export function installInterestEncoder(room: Room, leafTypes: readonly SchemaClass[]): InterestEncoder {
  const serializer = (room as unknown as { _serializer?: unknown })._serializer;
  if (!(serializer instanceof SchemaSerializer)) throw new Error("installInterestEncoder: the room has no schema serializer yet");
  const holder = serializer as unknown as { encoder: Encoder };
  const encoder = new InterestEncoder(holder.encoder.state as Schema, holder.encoder.root, leafTypes);
  holder.encoder = encoder;
  return encoder;
}
