import { SqlError } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { isSessionEnded } from "../../src/database/sql-state.js"

const failure = (cause: unknown) => new SqlError.SqlError({ cause, message: "Failed to execute statement" })

describe("isSessionEnded", () => {
  it("is true for a session the server ended or whose connection is gone, and only for those", () => {
    // The server shutting down, a backend terminated, a crash of another backend.
    for (const code of ["57P01", "57P02", "57P03"]) expect(isSessionEnded(failure({ code }))).toBe(true)
    expect(isSessionEnded(failure(new Error("Connection terminated unexpectedly")))).toBe(true)
    expect(
      isSessionEnded(failure(new Error("Client has encountered a connection error and is not queryable"))),
    ).toBe(true)
    // A statement cancelled (statement_timeout) in a session that lives on, and any other failure.
    expect(isSessionEnded(failure({ code: "57014" }))).toBe(false)
    expect(isSessionEnded(failure({ code: "40P01" }))).toBe(false)
    expect(isSessionEnded(new Error("Connection terminated unexpectedly"))).toBe(false)
  })
})
