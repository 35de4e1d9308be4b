import { SqlError } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { isDatabaseUnreachable } from "../src/http/api-error-of.js"

const sqlError = (cause: unknown) => new SqlError.SqlError({ cause, message: "query failed" })

describe("A database failure answered 503 SV5003 (retry later) rather than 500 SV5000", () => {
  it("is any sign of a connection lost or not had: pg's messages, errno codes, SQLSTATE classes", () => {
    for (const cause of [
      new Error("Connection terminated unexpectedly"),
      new Error("Client has encountered a connection error and is not queryable"),
      new Error("timeout exceeded when trying to connect"),
      new Error("Connection timed out"),
      Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }),
      Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01" }),
      Object.assign(new Error("connection failure"), { code: "08006" }),
      new Error("wrapped", { cause: Object.assign(new Error("refused"), { code: "ECONNREFUSED" }) }),
    ]) {
      expect(isDatabaseUnreachable(sqlError(cause)), String(cause)).toBe(true)
    }
  })

  it("is not a failure of the statement itself, nor anything but a SqlError", () => {
    for (const cause of [
      Object.assign(new Error("duplicate key value"), { code: "23505" }),
      Object.assign(new Error("deadlock detected"), { code: "40P01" }),
      new Error("syntax error"),
    ]) {
      expect(isDatabaseUnreachable(sqlError(cause)), String(cause)).toBe(false)
    }
    expect(isDatabaseUnreachable(new Error("Connection terminated unexpectedly"))).toBe(false)
  })
})
