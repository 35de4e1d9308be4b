/**
 * Raised (as a defect) when a decider does not behave as a specification expects. It carries `actual` and
 * `expected` so that test runners such as vitest print a diff.
 */
export class SpecificationFailure extends Error {
  override readonly name = "SpecificationFailure"
  readonly showDiff = true
  constructor(
    message: string,
    readonly actual: unknown,
    readonly expected: unknown,
  ) {
    super(message)
  }
}
