// The flame graph's data, without VS Code or a DOM: the server's bottleneck.flame answer (the
// run's sampled stacks, folded), merged into a tree and laid out as an icicle (the outermost
// frame on top), shared by the extension and the webview's script (unit-tested in
// test/flame.test.ts).

export interface FlameFrame {
  label: string;
  file: string;
  line: number;
  function: string;
  user: boolean;
  uri: string;
  notebook?: string; // a notebook cell's frame: the notebook's URI and the cell's place
  cell?: number;
}

export interface FlameAnswer {
  script: string | null;
  name?: string;
  frames?: FlameFrame[];
  stacks?: { frames: number[]; time_s: number }[];
  total_s?: number;
  dropped_s?: number;
  message?: string;
}

export interface FlameNode {
  frame: number; // index into the answer's frames; -1: the root (the whole run)
  time: number; // seconds at this frame and below
  children: Map<number, FlameNode>;
}

/** One drawn frame: where (fractions of the width, its depth) and what. */
export interface FlameBox {
  node: FlameNode;
  frame: number;
  depth: number;
  x: number;
  width: number;
  time: number;
}

/** The stacks merged into one tree: frames that share their callers share a node. */
export function mergeStacks(answer: FlameAnswer): FlameNode {
  const root: FlameNode = { frame: -1, time: 0, children: new Map() };
  for (const stack of answer.stacks ?? []) {
    root.time += stack.time_s;
    let node = root;
    for (const frame of stack.frames) {
      let child = node.children.get(frame);
      if (child === undefined) {
        child = { frame, time: 0, children: new Map() };
        node.children.set(frame, child);
      }
      child.time += stack.time_s;
      node = child;
    }
  }
  return root;
}

/** The boxes to draw, parents before children, children widest first: only those at least
 * `minWidth` of the whole (narrower ones, and all below them, are left out: they would be
 * under a pixel). The root itself is not a box; a root that is a frame (a zoomed-in box) is
 * drawn as the top row. */
export function layout(root: FlameNode, minWidth: number): FlameBox[] {
  const out: FlameBox[] = [];
  if (root.time <= 0) {
    return out;
  }
  const walk = (node: FlameNode, depth: number, x: number): void => {
    let at = x;
    const children = [...node.children.values()].sort((a, b) => b.time - a.time);
    for (const child of children) {
      const width = child.time / root.time;
      if (width < minWidth) {
        break; // the rest are narrower still
      }
      out.push({ node: child, frame: child.frame, depth, x: at, width, time: child.time });
      walk(child, depth + 1, at);
      at += width;
    }
  };
  if (root.frame >= 0) {
    out.push({ node: root, frame: root.frame, depth: 0, x: 0, width: 1, time: root.time });
    walk(root, 1, 0);
  } else {
    walk(root, 0, 0);
  }
  return out;
}

/** "1.234 s" or "56.7 ms". */
export function seconds(value: number): string {
  return value >= 1 ? `${value.toFixed(3)} s` : `${(value * 1000).toFixed(1)} ms`;
}
