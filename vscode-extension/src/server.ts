// The language server's life: find the interpreter, check it can run the server, start the
// client, pass settings, restart on interpreter or server-source changes, stop cleanly; and
// each profile request with the settings of the workspace folder that holds its script.
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
import { remedy } from "./interpreterChoice";
import { showServerProgress } from "./progress";
import {
  type ExtensionSettings,
  profileRequest,
  type ProfileRequest,
  readSettings,
  SECTION,
  serverLaunch,
  serverSettings,
} from "./settings";
import type { Status } from "./status";

export { SECTION } from "./settings";

export class ServerController implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private interpreter: Interpreter | undefined;
  private starting: Promise<LanguageClient | undefined> | undefined;
  private readonly warned = new Set<string>(); // settings problems already logged
  private readonly progress = new vscode.EventEmitter<string>();
  /** Each message of the server's progress (a pass started, the hot lines so far). */
  readonly onProgress = this.progress.event;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly log: vscode.LogOutputChannel,
    private readonly status: Status,
  ) {}

  /** The settings as they apply to `resource`: its workspace folder's values for the
   * resource-scoped ones (package.json's scope), which travel with each profile request.
   * Without a resource, the window's values: what the server-wide (window-scoped) settings
   * are read from. */
  settings(resource?: vscode.Uri): ExtensionSettings {
    const config = vscode.workspace.getConfiguration(SECTION, resource);
    const { settings, problems } = readSettings((key) => config.get(key));
    for (const problem of problems) {
      if (!this.warned.has(problem)) {
        this.warned.add(problem);
        this.log.warn(problem);
      }
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

  /** The running client, starting it when needed; undefined when it cannot start (said why).
   * `resource`: the file the server is needed for, whose folder's interpreter starts it. */
  async ensure(resource?: vscode.Uri): Promise<LanguageClient | undefined> {
    if (this.client?.state === State.Running) {
      return this.client;
    }
    this.starting ??= this.start(resource ?? this.resource()).finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private async start(resource: vscode.Uri | undefined): Promise<LanguageClient | undefined> {
    await this.stop();
    // One server process serves every workspace folder, on one interpreter: the one chosen
    // for `resource`'s folder (the script about to be profiled, else the active editor's
    // file, else the first folder). When folders disagree on bottleneck.interpreter (or the
    // Python extension's interpreter), that matters only for the server itself: it must be
    // Python 3.10+ (and, for a server from its own environment, have bottleneck-lsp installed).
    // Scripts do not run on it: each profile request names its own folder's interpreter as
    // `python` (profileRequest), so a script in folder A runs on A's interpreter and one in
    // folder B on B's, whichever started the server.
    const settings = this.settings(); // the server's source and the server-wide settings: window-scoped
    const interpreterSetting = this.settings(resource).interpreter;
    this.status.server("starting", "");
    const interpreter = await findInterpreter(resource, interpreterSetting, this.log);
    const launch = serverLaunch(interpreter.path, this.context.extensionPath, settings);
    this.log.info(`server interpreter ${interpreter.path} (from ${interpreter.from}); server: ${launch.source}`);
    const checked = await probe(launch.command, launch.args);
    if (!checked.ok) {
      const message =
        `Bottleneck cannot start its server with ${interpreter.path} (from ${interpreter.from}): ${checked.detail}. ` +
        remedy(interpreter.from);
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
      // A Jupyter notebook's cells too (the server declares notebook sync): without this
      // filter the client asks no lenses or hovers for them.
      documentSelector: [
        { scheme: "file", language: "python" },
        { notebook: "jupyter-notebook", language: "python" },
      ],
      outputChannel: this.log,
      traceOutputChannel: this.log,
      diagnosticCollectionName: "bottleneck",
      initializationOptions: serverSettings(settings, interpreter.path),
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
    showServerProgress(client, (message) => {
      this.status.progress(message);
      this.progress.fire(message);
    });
    this.client = client;
    this.interpreter = interpreter;
    this.status.server("running", `${interpreter.path} (${interpreter.from}); ${launch.source} server`);
    return client;
  }

  /** The server-wide settings reach the running server as they change (the per-folder ones
   * are read again for each profile request; interpreter and server source restart it). */
  async pushSettings(): Promise<void> {
    const client = this.client;
    if (client?.state !== State.Running || this.interpreter === undefined) {
      return;
    }
    await client.sendNotification(DidChangeConfigurationNotification.type, {
      settings: serverSettings(this.settings(), this.interpreter.path),
    });
  }

  /** The bottleneck.profile argument object for `script`: the settings of the workspace folder
   * that holds it and the interpreter chosen for that folder. `args`: remembered for the script. */
  async profileRequest(
    script: vscode.Uri,
    args: string[] | undefined,
  ): Promise<{ request: ProfileRequest; interpreter: Interpreter }> {
    const settings = this.settings(script);
    const interpreter = await findInterpreter(script, settings.interpreter, this.log);
    const request = profileRequest(script.toString(), settings, interpreter.path, this.folder(script), args);
    return { request, interpreter };
  }

  /** Sends a server command to the server that runs, if one does (none is started for it). */
  async query(command: string, args: unknown[]): Promise<unknown> {
    const client = this.client;
    if (client?.state !== State.Running) {
      return undefined;
    }
    return client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args });
  }

  /** Sends a server command; `resource`: the file it is about (starts the server for its folder). */
  async execute(command: string, args: unknown[], resource?: vscode.Uri): Promise<unknown> {
    const client = await this.ensure(resource);
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
    this.progress.dispose();
  }
}
