import { Schema } from "effect"

/** The largest amount a single movement or order line total may carry. */
export const MAX_POINTS = 1_000_000_000

/** A positive whole number of points moved at once: 1..1,000,000,000. */
export const Points = Schema.Int.pipe(
  Schema.between(1, MAX_POINTS, { message: () => `must be an integer between 1 and ${MAX_POINTS}` }),
  Schema.brand("Points"),
  Schema.annotations({ identifier: "Points" }),
)
export type Points = typeof Points.Type

/** What an account holds: a whole number of points, never below zero. */
export const PointsBalance = Schema.Int.pipe(
  Schema.between(0, Number.MAX_SAFE_INTEGER, { message: () => "must be a non-negative safe integer" }),
  Schema.brand("PointsBalance"),
  Schema.annotations({ identifier: "PointsBalance" }),
)
export type PointsBalance = typeof PointsBalance.Type

/** The empty balance of a newly opened account. */
export const zeroBalance: PointsBalance = PointsBalance.make(0)
