/**
 * The seconds a `Retry-After` header asks to wait (RFC 9110 10.2.3: delay-seconds or an HTTP-date), counted
 * from `now`; null when absent or unreadable. A date in the past asks for no wait.
 */
export const retryAfterSeconds = (header: string | undefined, now: Date): number | null => {
  if (header === undefined) return null
  const text = header.trim()
  if (/^\d+$/.test(text)) return Number(text)
  // An HTTP-date names its weekday; a bare number-like or free text is not one.
  if (!/^[A-Za-z]{3},/.test(text)) return null
  const at = Date.parse(text)
  if (Number.isNaN(at)) return null
  return Math.max(0, Math.ceil((at - now.getTime()) / 1000))
}
