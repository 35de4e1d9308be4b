import { getRandomValues } from "node:crypto"
import { V7Generator } from "uuidv7"

// The random words come from the OS's CSPRNG 1,024 at a time: the package's default buffer holds 8, so it
// asked for more every few ids, and each ask costs ~20 us here (2 % of a write batch's CPU). Node's own
// crypto.randomUUID caches its entropy the same way.
const WORDS = 1024
const words = new Uint32Array(WORDS)
let next = WORDS

const generator = new V7Generator({
  nextUint32: () => {
    if (next === WORDS) {
      getRandomValues(words)
      next = 0
    }
    return words[next++] as number
  },
})

/** A new UUID v7 (RFC 9562): time-ordered, monotonic within the process, its random bits from the CSPRNG. */
export const uuidV7 = (): string => generator.generate().toString()
