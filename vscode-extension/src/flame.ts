// The flame graph of the last run, in a webview beside the editor: the server's bottleneck.flame
// answer drawn by dist/flame.js (src/webview/flame.ts). The page loads nothing from the network
// (its Content Security Policy allows only its own script, by nonce, and styles); a click on a
// frame of your files opens its line.
import { randomBytes } from "node:crypto";
import * as vscode from "vscode";
import type { FlameAnswer } from "./flameModel";
import { placeOf } from "./notebookModel";
import { openPlace } from "./places";

export const FLAME_VIEW = "bottleneck-vscode.flameGraph";

export class FlamePanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private answer: FlameAnswer | undefined;
  private ready = false;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly ask: () => Promise<FlameAnswer | undefined>,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  /** Open (or bring forward) the flame graph of the last run, asking the server for it. */
  async show(): Promise<void> {
    const answer = await this.ask();
    if (answer === undefined) {
      void vscode.window.showInformationMessage("Bottleneck: no server runs yet; profile a script first.");
      return;
    }
    if (answer.script === null) {
      void vscode.window.showInformationMessage(`Bottleneck: ${answer.message ?? "no profile yet."}`);
      return;
    }
    this.answer = answer;
    const title = `Flame graph: ${answer.name ?? "last run"}`;
    if (this.panel !== undefined) {
      this.panel.title = title;
      this.panel.reveal(vscode.ViewColumn.Beside, true);
      this.send();
      return;
    }
    const media = vscode.Uri.joinPath(this.extensionUri, "dist");
    const panel = vscode.window.createWebviewPanel(FLAME_VIEW, title, { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true }, {
      enableScripts: true,
      localResourceRoots: [media],
      retainContextWhenHidden: false,
    });
    this.panel = panel;
    this.ready = false;
    panel.webview.html = page(panel.webview, vscode.Uri.joinPath(media, "flame.js"));
    panel.webview.onDidReceiveMessage((message: { type?: string; uri?: string; line?: number }) => {
      if (message.type === "ready") {
        this.ready = true;
        this.send();
      } else if (message.type === "open" && typeof message.uri === "string" && typeof message.line === "number") {
        void this.open(message.uri, message.line);
      }
    });
    panel.onDidDispose(() => {
      this.panel = undefined;
    });
  }

  private send(): void {
    if (this.panel !== undefined && this.ready && this.answer !== undefined) {
      void this.panel.webview.postMessage({ type: "flame", answer: this.answer });
    }
  }

  private async open(uri: string, line: number): Promise<void> {
    // a notebook cell's frame: its notebook and cell are in the server's answer
    const frame = this.answer?.frames?.find((f) => f.uri === uri);
    try {
      await openPlace(placeOf({ ...frame, uri, line }), vscode.ViewColumn.One);
    } catch (error) {
      this.log.warn(`flame graph: could not open ${uri}:${line}: ${String(error)}`);
    }
  }

  dispose(): void {
    this.panel?.dispose();
  }
}

function page(webview: vscode.Webview, script: vscode.Uri): string {
  const nonce = randomBytes(16).toString("base64");
  const csp = [
    "default-src 'none'",
    `style-src 'nonce-${nonce}'`,
    `script-src 'nonce-${nonce}'`,
  ].join("; ");
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<style nonce="${nonce}">
  body { padding: 0 8px; font-family: var(--vscode-font-family); font-size: 12px; color: var(--vscode-foreground); }
  #header { padding: 6px 0; }
  #header.zoomed { cursor: pointer; text-decoration: underline; }
  #graph { position: relative; width: 100%; }
  .frame { position: absolute; height: 17px; line-height: 17px; box-sizing: border-box; border-right: 1px solid var(--vscode-editor-background);
    border-bottom: 1px solid var(--vscode-editor-background); padding: 0 3px; overflow: hidden; white-space: nowrap; text-overflow: ellipsis; cursor: pointer; }
  .frame.user { background: var(--vscode-charts-orange, #d18616); color: var(--vscode-editor-background, #000); }
  .frame.library { background: var(--vscode-charts-blue, #3794ff); color: var(--vscode-editor-background, #fff); opacity: 0.55; }
  .frame:hover { filter: brightness(1.2); opacity: 1; }
</style>
<title>Flame graph</title>
</head>
<body>
<div id="header">Loading the run's stacks…</div>
<div id="graph"></div>
<script nonce="${nonce}" src="${webview.asWebviewUri(script).toString()}"></script>
</body>
</html>`;
}
