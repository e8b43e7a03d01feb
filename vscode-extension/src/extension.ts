// Bottleneck for VS Code: the palette commands, the server's hotspots inline, a status item.
import * as vscode from "vscode";
import { Commands } from "./commands";
import { FlamePanel } from "./flame";
import type { FlameAnswer } from "./flameModel";
import { HotspotsView } from "./hotspots";
import type { HotspotsAnswer } from "./hotspotsModel";
import { onInterpreterChange } from "./interpreter";
import { SECTION, ServerController } from "./server";
import { restartsServer } from "./settings";
import { Status } from "./status";

let controller: ServerController | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const log = vscode.window.createOutputChannel("Bottleneck", { log: true });
  const status = new Status();
  controller = new ServerController(context, log, status);
  const server = controller;
  const view = new HotspotsView(async () => (await server.query("bottleneck.hotspots", [])) as HotspotsAnswer | undefined);
  const flame = new FlamePanel(
    context.extensionUri,
    async () => (await server.query("bottleneck.flame", [])) as FlameAnswer | undefined,
    log,
  );
  context.subscriptions.push(
    log,
    status,
    server,
    view,
    flame,
    server.onProgress(() => {
      view.refresh();
    }),
    ...new Commands(context, server, status, log, view, flame).register(),
  );
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (restartsServer((id) => event.affectsConfiguration(id))) {
        void server.restart();
      } else if (event.affectsConfiguration(SECTION)) {
        void server.pushSettings();
      }
    }),
  );
  const interpreterChanges = await onInterpreterChange(() => {
    log.info("the Python extension's interpreter changed");
    void server.restart();
  });
  if (interpreterChanges !== undefined) {
    context.subscriptions.push(interpreterChanges);
  }
  // Starting the server runs no user code: the server only profiles on an explicit command.
  void server.ensure();
}

export async function deactivate(): Promise<void> {
  await controller?.stop();
}
