import { strict as assert } from "node:assert";
import { test } from "node:test";
import { chooseInterpreter, remedy } from "../src/interpreterChoice";

/** A stand-in for the Python extension: answers `path`, counts how often it was asked. */
function pythonExtension(path: string | undefined): { ask: () => Promise<string | undefined>; asked: () => number } {
  let asked = 0;
  return {
    ask: () => {
      asked += 1;
      return Promise.resolve(path);
    },
    asked: () => asked,
  };
}

test("the bottleneck.interpreter setting wins over the Python extension's interpreter", async () => {
  const python = pythonExtension("/venv/bin/python");
  assert.deepEqual(await chooseInterpreter("/opt/py311/bin/python", python.ask), {
    path: "/opt/py311/bin/python",
    from: "bottleneck.interpreter",
  });
  assert.equal(python.asked(), 0); // not even asked
  assert.deepEqual(await chooseInterpreter("  python3.12 ", python.ask), { path: "python3.12", from: "bottleneck.interpreter" });
});

test("no setting: the Python extension's interpreter for the folder", async () => {
  const python = pythonExtension("/venv/bin/python");
  assert.deepEqual(await chooseInterpreter("", python.ask), { path: "/venv/bin/python", from: "Python extension" });
  assert.deepEqual(await chooseInterpreter("   ", python.ask), { path: "/venv/bin/python", from: "Python extension" });
  assert.equal(python.asked(), 2);
});

test("no setting and no Python extension interpreter: python3 on PATH", async () => {
  assert.deepEqual(await chooseInterpreter("", pythonExtension(undefined).ask), { path: "python3", from: "PATH" });
  assert.deepEqual(await chooseInterpreter("", pythonExtension("").ask), { path: "python3", from: "PATH" });
});

test("the advice on a failed start points at the interpreter's source", () => {
  // The setting wins, so the Python extension's picker cannot fix an interpreter that came from it.
  assert.match(remedy("bottleneck.interpreter"), /^Set bottleneck\.interpreter/);
  assert.doesNotMatch(remedy("bottleneck.interpreter"), /picker/);
  assert.match(remedy("Python extension"), /interpreter picker/);
  assert.match(remedy("PATH"), /bottleneck\.interpreter setting/);
});
