// The flame graph's page (runs in the webview, bundled into dist/flame.js): draws the run's
// folded stacks as an icicle, the outermost frame on top, each box as wide as its share of
// the sampled time; frames of your files in their own colour, labelled file:line. A click on
// one of them asks the extension to open its line; a click on another box (or Alt+click) zooms
// into it (a click on the top bar zooms out). Nothing is fetched: the data comes in a message from the extension.
import { type FlameAnswer, type FlameNode, layout, mergeStacks, seconds } from "../flameModel";

interface VsCodeApi {
  postMessage(message: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
const ROW_PX = 18;
const MIN_PX = 2; // boxes narrower than this (and all below them) are not drawn

let answer: FlameAnswer = { script: null };
let root: FlameNode = { frame: -1, time: 0, children: new Map() };
let focus: FlameNode = root; // the box zoomed into (the root: the whole run)

function element<K extends keyof HTMLElementTagNameMap>(tag: K, className: string, text = ""): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  node.className = className;
  node.textContent = text;
  return node;
}

function draw(): void {
  const graph = document.getElementById("graph");
  const header = document.getElementById("header");
  if (graph === null || header === null) {
    return;
  }
  graph.replaceChildren();
  const frames = answer.frames ?? [];
  if (answer.message !== undefined || frames.length === 0) {
    header.textContent = answer.message ?? "No stacks to draw.";
    return;
  }
  const zoomed = focus !== root ? frames[focus.frame]?.label ?? "" : "";
  const dropped = (answer.dropped_s ?? 0) > 0 ? `; ${seconds(answer.dropped_s ?? 0)} in stacks left out` : "";
  header.textContent =
    `${answer.name ?? ""}: ${seconds(root.time)} of sampled time on the main thread${dropped}` +
    (zoomed ? ` · zoomed into ${zoomed} (${seconds(focus.time)}): click here to zoom out` : "");
  header.classList.toggle("zoomed", zoomed !== "");
  const width = Math.max(graph.clientWidth, 1);
  let depth = 0;
  for (const box of layout(focus, MIN_PX / width)) {
    const frame = frames[box.frame] as (typeof frames)[number] | undefined;
    if (frame === undefined) {
      continue; // (an answer whose stacks name a frame it does not list)
    }
    depth = Math.max(depth, box.depth + 1);
    const div = element("div", `frame ${frame.user ? "user" : "library"}`, frame.label);
    div.style.left = `${box.x * 100}%`;
    div.style.width = `${box.width * 100}%`;
    div.style.top = `${box.depth * ROW_PX}px`;
    const share = root.time > 0 ? (box.time / root.time) * 100 : 0;
    div.title =
      `${frame.label}${frame.user ? "" : ` (${frame.file}:${frame.line})`}\n` +
      `${seconds(box.time)}, ${share.toFixed(1)}% of the run's sampled time\n` +
      (frame.user ? "Click: open the line · Alt+click: zoom in" : "Click: zoom in");
    div.dataset.file = frame.file;
    div.dataset.line = String(frame.line);
    div.addEventListener("click", (event) => {
      if (frame.user && frame.uri && !event.altKey) {
        vscode.postMessage({ type: "open", uri: frame.uri, line: frame.line });
      } else if (box.node !== focus) {
        focus = box.node;
        draw();
      }
    });
    graph.appendChild(div);
  }
  graph.style.height = `${depth * ROW_PX}px`;
}

window.addEventListener("message", (event: MessageEvent) => {
  const data = event.data as { type?: string; answer?: FlameAnswer };
  if (data.type === "flame" && data.answer !== undefined) {
    answer = data.answer;
    root = focus = mergeStacks(answer);
    draw();
  }
});
document.getElementById("header")?.addEventListener("click", () => {
  if (focus !== root) {
    focus = root;
    draw();
  }
});
window.addEventListener("resize", () => {
  draw();
});
vscode.postMessage({ type: "ready" });
