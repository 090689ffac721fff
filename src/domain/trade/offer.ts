/** One side's offer in a trade, and what offers are worth (the confirmation screen, the audit). */

/** One offered inventory slot. `itemId` records what the slot held when offered. */
export interface OfferLine {
  readonly inventorySlot: number;
  readonly itemId: string;
  readonly quantity: number;
}

/** One side's offer: lines keyed by (unique) inventory slot, sorted by slot. CONTRACT shape. */
export interface TradeOffer {
  readonly items: readonly OfferLine[];
  readonly coins: number;
  readonly accepted: boolean;
}

/** The `values` of `tradeConfirmScreen`. */
export interface TradeValues {
  readonly myOfferValue: number;
  readonly theirOfferValue: number;
  /** theirOfferValue − myOfferValue: positive when this player gains. */
  readonly wealthTransfer: number;
}

/** Value of an offer: item value × quantity for each line, plus coins at 1 each. */
export function offerValue(offer: Pick<TradeOffer, "items" | "coins">, itemValue: (itemId: string) => number): number {
  let total = offer.coins;
  for (const line of offer.items) total += itemValue(line.itemId) * line.quantity;
  return total;
}

/** Values from the point of view of the owner of `myOffer`. */
export function computeValues(
  myOffer: Pick<TradeOffer, "items" | "coins">,
  theirOffer: Pick<TradeOffer, "items" | "coins">,
  itemValue: (itemId: string) => number,
): TradeValues {
  const myOfferValue = offerValue(myOffer, itemValue);
  const theirOfferValue = offerValue(theirOffer, itemValue);
  return { myOfferValue, theirOfferValue, wealthTransfer: theirOfferValue - myOfferValue };
}
