// A segment that does not decode (`%FF`, a lone `%`) is kept as sent: the router matches no route with it.
const routedSegment = (segment: string) => {
  try {
    return encodeURIComponent(decodeURIComponent(segment))
  } catch {
    return segment
  }
}

/**
 * A request path in one spelling of the many the router reads alike, to tell which operation it reaches:
 * each segment percent-decoded (the router reads `/api/%6Fauth/token` as `/api/oauth/token`) and encoded
 * again, so that an encoded `/` stays inside its segment; a segment that does not decode stays as sent.
 */
export const routedPath = (path: string): string => path.split("/").map(routedSegment).join("/")
