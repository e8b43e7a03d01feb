import { strict as assert } from "node:assert";
import { test } from "node:test";
import { ArgumentError, joinArguments, splitArguments } from "../src/args";

test("splits words like a POSIX shell", () => {
  assert.deepEqual(splitArguments("  --steps 30   --lr=1e-3 "), ["--steps", "30", "--lr=1e-3"]);
  assert.deepEqual(splitArguments(`--name "two words" 'it''s' a\\ b`), ["--name", "two words", "its", "a b"]);
  assert.deepEqual(splitArguments(`"say \\"hi\\"" '\\n'`), ['say "hi"', "\\n"]);
  assert.deepEqual(splitArguments(`"" ''`), ["", ""]);
  assert.deepEqual(splitArguments(""), []);
  assert.deepEqual(splitArguments("données/été.csv"), ["données/été.csv"]);
});

test("refuses unterminated quotes and a trailing backslash", () => {
  assert.throws(() => splitArguments(`--name "open`), ArgumentError);
  assert.throws(() => splitArguments("--name 'open"), /single quote/);
  assert.throws(() => splitArguments("trailing\\"), /backslash/);
});

test("join then split is exact", () => {
  const cases = [["--steps", "30"], ["a b", "", "it's", `"q"`, "$HOME", "x\\y", "tab\there", "été"]];
  for (const args of cases) {
    assert.deepEqual(splitArguments(joinArguments(args)), args);
  }
  assert.equal(joinArguments(["--steps", "30", "a b"]), "--steps 30 'a b'");
});
