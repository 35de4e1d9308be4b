import { Equal, Utils } from "effect"

/**
 * Compares two values by structure: Effect values (Schema classes, DateTime, tagged errors) through `Equal`,
 * plain arrays and objects field by field, so that events with array fields (order items) compare as data.
 */
export const structurallyEqual = (a: unknown, b: unknown): boolean =>
  Utils.structuralRegion(() => Equal.equals(a, b))
