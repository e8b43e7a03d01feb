import { strict as assert } from "node:assert";
import { test } from "node:test";
import { givenNotebook, isNotebookPath, placeOf } from "../src/notebookModel";

class FakeUri {
  constructor(readonly path: string) {}
}
const isUri = (value: unknown): value is FakeUri => value instanceof FakeUri;

test("the notebook toolbar's argument, a menu's URI, or nothing", () => {
  const uri = new FakeUri("/w/nb.ipynb");
  // what VS Code 1.139's notebook toolbar passes a command
  assert.equal(givenNotebook({ ui: true, notebookEditor: { notebookUri: uri }, source: "notebookToolbar" }, isUri), uri);
  assert.equal(givenNotebook(uri, isUri), uri);
  assert.equal(givenNotebook(undefined, isUri), undefined);
  assert.equal(givenNotebook({ notebookEditor: { notebookUri: "/w/nb.ipynb" } }, isUri), undefined);
  assert.equal(givenNotebook({ notebookEditor: null }, isUri), undefined);
  assert.equal(givenNotebook("file:///w/nb.ipynb", isUri), undefined);
});

test("a line in a notebook cell opens in its cell; any other in its file", () => {
  const cellKey = "file:///w/nb.ipynb%23cell4";
  assert.deepEqual(placeOf({ uri: cellKey, line: 3, column: 5, notebook: "file:///w/nb.ipynb", cell: 5 }), {
    kind: "cell",
    notebook: "file:///w/nb.ipynb",
    cell: 5,
    line: 3,
    column: 5,
  });
  assert.deepEqual(placeOf({ uri: "file:///w/train.py", line: 42 }), { kind: "file", uri: "file:///w/train.py", line: 42, column: 1 });
});

test("notebooks are .ipynb files", () => {
  assert.ok(isNotebookPath("/w/Exp.IPYNB") && isNotebookPath("/w/nb.ipynb"));
  assert.ok(!isNotebookPath("/w/nb.ipynb.py") && !isNotebookPath("/w/train.py"));
});
