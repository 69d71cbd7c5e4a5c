/**
 * When a hold ends, from when it starts: the one rule of ORDER_HOLD_MINUTES. The placement hands
 * it to the store (NewOrder.holdEnds), which applies it to the time of the placement on its own
 * clock, in the placing transaction (PostgreSQL: the database's `now()`), never the caller's.
 */
export type HoldEnds = (placedAt: number) => number

/** The rule for a hold of `holdMs` (ORDER_HOLD_MINUTES, in ms): an order still placed at its end expires. */
export const holdRule =
  (holdMs: number): HoldEnds =>
  (placedAt) =>
    placedAt + holdMs
