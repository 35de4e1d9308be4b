export { checkCatalogRoundTrip } from "./catalog-round-trip.js"
export {
  DeciderSpecification,
  replay,
  type Specification,
  type Then,
  type When,
} from "./decider-specification.js"
export { sequentialId } from "./sequential-id.js"
export { SpecificationFailure } from "./specification-failure.js"
export { structurallyEqual } from "./structural-equality.js"
