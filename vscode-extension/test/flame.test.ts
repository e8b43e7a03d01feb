import { strict as assert } from "node:assert";
import { test } from "node:test";
import { type FlameAnswer, layout, mergeStacks, seconds } from "../src/flameModel";

const frame = (label: string, user = true) => ({ label, file: "train.py", line: 1, function: label, user, uri: "" });

const ANSWER: FlameAnswer = {
  script: "file:///w/train.py",
  frames: [frame("train.py:10 <module>"), frame("train.py:3 step"), frame("forward", false), frame("train.py:2 step")],
  stacks: [
    { frames: [0, 1, 2], time_s: 3 },
    { frames: [0, 3], time_s: 1 },
    { frames: [0, 1], time_s: 0.5 },
  ],
};

test("merges stacks that share their callers into one tree", () => {
  const root = mergeStacks(ANSWER);
  assert.equal(root.time, 4.5);
  const module = root.children.get(0);
  assert.equal(module?.time, 4.5); // (asserts: module is defined from here)
  assert.deepEqual([...module.children.keys()], [1, 3]);
  assert.equal(module.children.get(1)?.time, 3.5);
  assert.equal(module.children.get(1)?.children.get(2)?.time, 3);
});

test("lays boxes out as an icicle, children widest first, the narrow ones left out", () => {
  const boxes = layout(mergeStacks(ANSWER), 0.01).map((b) => [b.frame, b.depth, +b.x.toFixed(4), +b.width.toFixed(4)]);
  assert.deepEqual(boxes, [
    [0, 0, 0, 1],
    [1, 1, 0, 0.7778],
    [2, 2, 0, 0.6667],
    [3, 1, 0.7778, 0.2222],
  ]);
  // wider than a quarter only: line 2's box (22%) goes
  assert.deepEqual(
    layout(mergeStacks(ANSWER), 0.25).map((b) => b.frame),
    [0, 1, 2],
  );
  // zoomed into a box: it is the top row, its children against its own time
  const step = mergeStacks(ANSWER).children.get(0)?.children.get(1);
  assert.ok(step !== undefined);
  assert.deepEqual(
    layout(step, 0).map((b) => [b.frame, b.depth, +b.width.toFixed(4)]),
    [
      [1, 0, 1],
      [2, 1, 0.8571],
    ],
  );
  assert.deepEqual(layout(mergeStacks({ script: null }), 0), []);
});

test("a run's worth of stacks (5,000 of them, 40 deep) lays out whole, the boxes within the width", () => {
  const frames = Array.from({ length: 2_000 }, (_, i) => frame(`f${i}`, i % 3 === 0));
  const stacks = Array.from({ length: 5_000 }, (_, i) => ({
    // three frames shared by all, then each level one of a few callees (as a model's layers)
    frames: Array.from({ length: 40 }, (_, d) => (d < 3 ? d : 3 + d * 40 + (Math.floor(i / 4 ** (d % 6)) % 4))),
    time_s: 1 + (i % 17),
  }));
  const begin = performance.now();
  const boxes = layout(mergeStacks({ script: "x", frames, stacks }), 2 / 1000); // 2 px of 1,000
  const took = performance.now() - begin;
  console.log(`laid out ${boxes.length} boxes of 5,000 stacks in ${took.toFixed(0)} ms`); // a figure, not a check
  assert.ok(boxes.length > 100);
  for (const box of boxes) {
    assert.ok(box.x >= -1e-9 && box.x + box.width <= 1 + 1e-9, JSON.stringify(box));
  }
});

test("words seconds as the report does", () => {
  assert.equal(seconds(1.3254), "1.325 s");
  assert.equal(seconds(0.2767), "276.7 ms");
});
