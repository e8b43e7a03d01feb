import { strict as assert } from "node:assert";
import { test } from "node:test";
import { amount, byFile, groupLabel, type HotspotRow, passesLine, rowLabel } from "../src/hotspotsModel";

function row(uri: string, line: number, share: number, extra: Partial<HotspotRow> = {}): HotspotRow {
  return {
    uri,
    path: uri.split("/").at(-1) ?? uri,
    line,
    column: 1,
    text: `line ${line}`,
    column_kind: "wall-time",
    column_label: "wall",
    share,
    time_s: share * 2,
    bytes: null,
    severity: "warning",
    lens: "",
    since: "",
    hover: "",
    ...extra,
  };
}

test("groups rows by file in the order of each file's hottest line, keeping the ranking's order", () => {
  const rows = [row("file:///a.py", 9, 0.5), row("file:///b.py", 3, 0.3), row("file:///a.py", 2, 0.1)];
  const groups = byFile(rows);
  assert.deepEqual(
    groups.map((g) => [g.path, g.share, g.rows.map((r) => r.line)]),
    [
      ["a.py", 0.5, [9, 2]],
      ["b.py", 0.3, [3]],
    ],
  );
  assert.deepEqual(byFile([]), []);
});

test("words a row as its line, text, share, column and amount, with its change", () => {
  const hot = row("file:///a.py", 7, 0.401, { text: "b = torch.linalg.inv(x)", time_s: 1.325, since: "-79% since last run (edited)" });
  assert.deepEqual(rowLabel(hot), {
    label: "7: b = torch.linalg.inv(x)",
    description: "40.1% wall · 1.325 s · -79% since last run (edited)",
  });
  assert.equal(amount({ ...hot, time_s: 0.2767 }), "276.7 ms");
  assert.equal(amount({ ...hot, time_s: 0, bytes: 48_000_000, column_label: "memory" }), "48.0 MB");
  assert.equal(rowLabel({ ...hot, text: "x".repeat(100) }).label.length, 3 + 80);
});

test("lists the passes with their statuses", () => {
  assert.equal(
    passesLine([
      { name: "sample", status: "ok", detail: "" },
      { name: "cpu", status: "script_error", detail: "" },
    ]),
    "sample ok · cpu script error",
  );
});

test("a notebook cell's lines are a group of their own, named by notebook and cell", () => {
  const notebook = "file:///w/exp/nb.ipynb";
  const rows = [
    row("file:///w/exp/nb.ipynb%23cell4", 3, 0.9, { path: "exp/nb.ipynb#cell4", notebook, cell: 5 }),
    row("file:///w/exp/nb.ipynb%23cell2", 3, 0.05, { path: "exp/nb.ipynb#cell2", notebook, cell: 2 }),
    row("file:///w/exp/nb.ipynb%23cell4", 4, 0.01, { path: "exp/nb.ipynb#cell4", notebook, cell: 5 }),
  ];
  const relative = (uri: string): string => uri.replace("file:///w/", "");
  const groups = byFile(rows);
  // the cell's place in the editor now (5: a cell was inserted above it since the run)
  assert.deepEqual(
    groups.map((g) => [groupLabel(g, relative), g.rows.map((r) => r.line)]),
    [
      ["exp/nb.ipynb cell 5", [3, 4]],
      ["exp/nb.ipynb cell 2", [3]],
    ],
  );
  assert.equal(groupLabel(byFile([row("file:///w/train.py", 1, 1)])[0], relative), "train.py");
  assert.equal(groupLabel(byFile([row("untitled:x", 1, 1, { path: "x" })])[0], relative), "x");
});
