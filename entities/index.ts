/** Every storage entity, for ORM discovery. */
export * from "./account.js";
export * from "./character.js";
export * from "./world.js";
export * from "./activity.js";
export * from "./social.js";
export * from "./trade.js";
export * from "./agent.js";
export * from "./lease.js";

import { AccountEntity } from "./account.js";
import { CharacterEntity, InventoryItemEntity, EquipmentItemEntity, BankItemEntity } from "./character.js";
import { GroundPileEntity, ItemDefinitionEntity, WorldChunkEntity } from "./world.js";
import { PlayerLoginEntity, PlayerDeathEntity, NpcKillEntity } from "./activity.js";
import { FriendshipEntity, FriendRequestEntity, IgnoreEntryEntity } from "./social.js";
import { TradeAuditEntity } from "./trade.js";
import { AgentMappingEntity } from "./agent.js";
import { CharacterLeaseEntity } from "./lease.js";

export const ALL_ENTITIES = [
  AccountEntity,
  CharacterEntity,
  InventoryItemEntity,
  EquipmentItemEntity,
  BankItemEntity,
  ItemDefinitionEntity,
  WorldChunkEntity,
  GroundPileEntity,
  PlayerLoginEntity,
  PlayerDeathEntity,
  NpcKillEntity,
  FriendshipEntity,
  FriendRequestEntity,
  IgnoreEntryEntity,
  TradeAuditEntity,
  AgentMappingEntity,
  CharacterLeaseEntity,
];
