// The language server's life: find the interpreter, check it can run the server, start the
// client, pass settings, restart on interpreter or server-source changes, stop cleanly.
import * as vscode from "vscode";
import {
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  LanguageClient,
  type LanguageClientOptions,
  type ServerOptions,
  State,
} from "vscode-languageclient/node";
import { findInterpreter, type Interpreter, probe } from "./interpreter";
import { showServerProgress } from "./progress";
import { type ExtensionSettings, readSettings, serverLaunch, serverSettings } from "./settings";
import type { Status } from "./status";

export const SECTION = "bottleneck";

export class ServerController implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private interpreter: Interpreter | undefined;
  private starting: Promise<LanguageClient | undefined> | undefined;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly log: vscode.LogOutputChannel,
    private readonly status: Status,
  ) {}

  settings(resource?: vscode.Uri): ExtensionSettings {
    const config = vscode.workspace.getConfiguration(SECTION, resource);
    const { settings, problems } = readSettings((key) => config.get(key));
    for (const problem of problems) {
      this.log.warn(problem);
    }
    return settings;
  }

  private folder(resource?: vscode.Uri): string | undefined {
    const folder =
      (resource ? vscode.workspace.getWorkspaceFolder(resource) : undefined) ?? vscode.workspace.workspaceFolders?.[0];
    return folder?.uri.fsPath;
  }

  private resource(): vscode.Uri | undefined {
    return vscode.window.activeTextEditor?.document.uri ?? vscode.workspace.workspaceFolders?.[0]?.uri;
  }

  /** The running client, starting it when needed; undefined when it cannot start (said why). */
  async ensure(): Promise<LanguageClient | undefined> {
    if (this.client?.state === State.Running) {
      return this.client;
    }
    this.starting ??= this.start().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private async start(): Promise<LanguageClient | undefined> {
    await this.stop();
    const resource = this.resource();
    const settings = this.settings(resource);
    this.status.server("starting", "");
    const interpreter = await findInterpreter(resource, settings.interpreter, this.log);
    const launch = serverLaunch(interpreter.path, this.context.extensionPath, settings.serverSource);
    this.log.info(`interpreter ${interpreter.path} (from ${interpreter.from}); server: ${settings.serverSource}`);
    const checked = await probe(launch.command, launch.args);
    if (!checked.ok) {
      const message =
        `Bottleneck cannot start its server with ${interpreter.path} (from ${interpreter.from}): ${checked.detail}. ` +
        "Choose a Python 3.10+ interpreter (the Python extension's interpreter picker or the bottleneck.interpreter setting).";
      this.log.error(message);
      this.status.server("failed", checked.detail);
      void vscode.window.showErrorMessage(message, "Open Settings", "Show Log").then((choice) => {
        if (choice === "Open Settings") {
          void vscode.commands.executeCommand("workbench.action.openSettings", "bottleneck.interpreter");
        } else if (choice === "Show Log") {
          this.log.show();
        }
      });
      return undefined;
    }
    this.log.info(checked.detail);
    // No `transport` here: vscode-languageclient would append --stdio; stdio is the default.
    const serverOptions: ServerOptions = {
      command: launch.command,
      args: launch.args,
      options: { cwd: this.folder(resource) ?? this.context.extensionPath },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: "file", language: "python" }],
      outputChannel: this.log,
      traceOutputChannel: this.log,
      diagnosticCollectionName: "bottleneck",
      initializationOptions: serverSettings(settings, interpreter.path, this.folder(resource)),
    };
    const client = new LanguageClient("bottleneck", "Bottleneck", serverOptions, clientOptions);
    client.onDidChangeState(({ newState }) => {
      if (newState === State.Stopped && this.client === client) {
        this.status.server("stopped", interpreter.path);
      }
    });
    try {
      await client.start();
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      this.log.error(`the server did not start: ${detail}`);
      this.status.server("failed", detail);
      void vscode.window.showErrorMessage(`Bottleneck: the server did not start: ${detail}`);
      return undefined;
    }
    showServerProgress(client);
    this.client = client;
    this.interpreter = interpreter;
    this.status.server("running", `${interpreter.path} (${interpreter.from}); ${settings.serverSource} server`);
    return client;
  }

  /** Settings other than the interpreter and server source reach the running server as they change. */
  async pushSettings(): Promise<void> {
    const client = this.client;
    if (client?.state !== State.Running || this.interpreter === undefined) {
      return;
    }
    const resource = this.resource();
    await client.sendNotification(DidChangeConfigurationNotification.type, {
      settings: serverSettings(this.settings(resource), this.interpreter.path, this.folder(resource)),
    });
  }

  async execute(command: string, args: unknown[]): Promise<unknown> {
    const client = await this.ensure();
    if (client === undefined) {
      return undefined;
    }
    return client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args });
  }

  async restart(): Promise<void> {
    this.log.info("restarting the server");
    await this.stop();
    await this.ensure();
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client !== undefined && client.needsStop()) {
      // The server's shutdown handler stops running jobs and kills their process groups.
      await client.stop(10_000).catch((error: unknown) => {
        this.log.warn(`stopping the server: ${String(error)}`);
      });
    }
  }

  dispose(): void {
    void this.stop();
  }
}
