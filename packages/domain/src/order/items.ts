import { Arbitrary, Schema } from "effect"
import { MAX_POINTS, Points } from "../shared/points.js"
import { DisplayName, Limits, Sku } from "../shared/text.js"

/** How many units of an item an order line takes: 1..1000. */
export const Quantity = Schema.Int.pipe(
  Schema.between(Limits.quantityMin, Limits.quantityMax, {
    message: () => `must be an integer between ${Limits.quantityMin} and ${Limits.quantityMax}`,
  }),
  Schema.annotations({ identifier: "Quantity" }),
)

/** One line of an order: a catalogue item, how many, and the points each costs. */
export const OrderItem = Schema.Struct({
  sku: Sku,
  name: Schema.NullOr(DisplayName),
  quantity: Quantity,
  points: Points,
})
export type OrderItem = typeof OrderItem.Type

/** The points an order costs: the sum of `quantity * points` over its lines. */
export const totalPointsOf = (items: ReadonlyArray<Pick<OrderItem, "quantity" | "points">>): number =>
  items.reduce((total, item) => total + item.quantity * item.points, 0)

// Random lines almost always cost more than MAX_POINTS together, so generated orders are scaled down to fit:
// each line gets at most an equal share of the limit (a share of at least 10,000 points per unit).
const fittingItems: Arbitrary.LazyArbitrary<ReadonlyArray<OrderItem>> = (fc) =>
  fc
    .array(Arbitrary.make(OrderItem), { minLength: Limits.itemsMin, maxLength: Limits.itemsMax })
    .map((items) => {
      const share = Math.floor(MAX_POINTS / items.length)
      return items.map((item) => ({
        ...item,
        points: Points.make(Math.min(item.points, Math.floor(share / item.quantity))),
      }))
    })

/** The lines of an order: 1..100 of them, costing at most MAX_POINTS in total (the most one debit can take). */
export const OrderItems = Schema.Array(OrderItem).pipe(
  Schema.minItems(Limits.itemsMin, { message: () => `must have at least ${Limits.itemsMin} item` }),
  Schema.maxItems(Limits.itemsMax, { message: () => `must have at most ${Limits.itemsMax} items` }),
  Schema.filter((items) => totalPointsOf(items) <= MAX_POINTS, {
    message: () => `must cost at most ${MAX_POINTS} points in total (the sum of quantity * points)`,
    arbitrary: () => fittingItems,
  }),
  Schema.annotations({ identifier: "OrderItems" }),
)
