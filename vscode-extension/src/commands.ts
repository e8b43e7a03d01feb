// The palette commands. Their ids (bottleneck-vscode.*) differ from the server's
// executeCommand ids (bottleneck.*), which vscode-languageclient registers itself.
import * as path from "node:path";
import * as vscode from "vscode";
import { ArgumentError, joinArguments, splitArguments } from "./args";
import type { FlamePanel } from "./flame";
import { type HotspotsView, OPEN_PLACE, VIEW } from "./hotspots";
import { givenNotebook, isNotebookPath, type Place } from "./notebookModel";
import { openPlace } from "./places";
import type { ServerController } from "./server";
import type { Status } from "./status";

export const COMMANDS = {
  profile: "bottleneck-vscode.profile",
  profileWithArguments: "bottleneck-vscode.profileWithArguments",
  profileNotebook: "bottleneck-vscode.profileNotebook",
  stop: "bottleneck-vscode.stop",
  clear: "bottleneck-vscode.clear",
  report: "bottleneck-vscode.report",
  pinBaseline: "bottleneck-vscode.pinBaseline",
  clearBaseline: "bottleneck-vscode.clearBaseline",
  openResult: "bottleneck-vscode.openResult",
  restart: "bottleneck-vscode.restart",
  showHotspots: "bottleneck-vscode.showHotspots",
  refreshHotspots: "bottleneck-vscode.refreshHotspots",
  showFlameGraph: "bottleneck-vscode.showFlameGraph",
} as const;

const ARGS_KEY = "bottleneck.scriptArguments"; // workspaceState: script URI -> arguments

interface ProfileResult {
  status?: string;
  message?: string;
  summary?: string;
}

interface OpenedResult extends ProfileResult {
  script?: string;
  shown?: number;
  skipped?: { path: string; line: number; reason: string }[];
}

export class Commands {
  private readonly running = new Map<string, number>(); // script URI -> requests in flight

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly server: ServerController,
    private readonly status: Status,
    private readonly log: vscode.LogOutputChannel,
    private readonly view: HotspotsView,
    private readonly flame: FlamePanel,
  ) {}

  register(): vscode.Disposable[] {
    const on = (id: string, run: (uri?: vscode.Uri) => Promise<void>): vscode.Disposable =>
      vscode.commands.registerCommand(id, (uri?: unknown) => run(uri instanceof vscode.Uri ? uri : undefined));
    return [
      on(COMMANDS.profile, (uri) => this.profile(uri, false)),
      on(COMMANDS.profileWithArguments, (uri) => this.profile(uri, true)),
      vscode.commands.registerCommand(COMMANDS.profileNotebook, (arg?: unknown) => this.profileNotebook(arg)),
      vscode.commands.registerCommand(OPEN_PLACE, (place: Place) => this.openPlace(place)),
      on(COMMANDS.stop, (uri) => this.stop(uri)),
      on(COMMANDS.clear, () => this.clear()),
      on(COMMANDS.report, (uri) => this.report(uri)),
      on(COMMANDS.pinBaseline, (uri) => this.baseline("bottleneck.pinBaseline", uri)),
      on(COMMANDS.clearBaseline, (uri) => this.baseline("bottleneck.clearBaseline", uri)),
      on(COMMANDS.openResult, (uri) => this.openResult(uri)),
      on(COMMANDS.restart, () => this.server.restart()),
      on(COMMANDS.showHotspots, async () => {
        await vscode.commands.executeCommand(`${VIEW}.focus`);
        this.view.refresh();
      }),
      on(COMMANDS.refreshHotspots, () => {
        this.view.refresh();
        return Promise.resolve();
      }),
      on(COMMANDS.showFlameGraph, () => this.flame.show()),
    ];
  }

  /** The script: the URI a menu passed, else the active editor's file. */
  private async script(uri: vscode.Uri | undefined): Promise<vscode.Uri | undefined> {
    const document = uri
      ? vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString())
      : vscode.window.activeTextEditor?.document;
    const target = uri ?? document?.uri;
    if (target === undefined) {
      void vscode.window.showErrorMessage("Bottleneck: open a Python script first.");
      return undefined;
    }
    if (target.scheme !== "file") {
      void vscode.window.showErrorMessage(`Bottleneck profiles files on disk; ${target.toString()} is not one.`);
      return undefined;
    }
    if (document !== undefined && document.languageId !== "python") {
      void vscode.window.showErrorMessage(`Bottleneck: ${path.basename(target.fsPath)} is not a Python file.`);
      return undefined;
    }
    await saveFirst(document, target, "file");
    return target;
  }

  private remembered(uri: vscode.Uri): string[] | undefined {
    return this.context.workspaceState.get<Record<string, string[]>>(ARGS_KEY, {})[uri.toString()];
  }

  private async remember(uri: vscode.Uri, args: string[]): Promise<void> {
    const all = { ...this.context.workspaceState.get<Record<string, string[]>>(ARGS_KEY, {}) };
    all[uri.toString()] = args;
    await this.context.workspaceState.update(ARGS_KEY, all);
  }

  private async askArguments(uri: vscode.Uri): Promise<string[] | undefined> {
    const previous = this.remembered(uri) ?? this.server.settings(uri).args;
    const text = await vscode.window.showInputBox({
      title: `Arguments for ${path.basename(uri.fsPath)}`,
      prompt: "Script arguments, quoted as in a shell; remembered for this script",
      value: joinArguments(previous),
      placeHolder: "--epochs 1 --batch-size 32",
      validateInput: (value) => {
        try {
          splitArguments(value);
          return undefined;
        } catch (error) {
          return error instanceof ArgumentError ? error.message : String(error);
        }
      },
    });
    if (text === undefined) {
      return undefined;
    }
    const args = splitArguments(text);
    await this.remember(uri, args);
    return args;
  }

  /** The notebook: the toolbar's (or a menu's URI), else the active notebook editor's, else
   * an .ipynb open as text; saved first when it has unsaved edits, as a script is. */
  private async notebook(arg: unknown): Promise<vscode.Uri | undefined> {
    const text = vscode.window.activeTextEditor?.document;
    const target =
      givenNotebook(arg, (value): value is vscode.Uri => value instanceof vscode.Uri) ??
      vscode.window.activeNotebookEditor?.notebook.uri ??
      (text !== undefined && isNotebookPath(text.uri.path) ? text.uri : undefined);
    if (target === undefined) {
      void vscode.window.showErrorMessage("Bottleneck: open a Jupyter notebook first.");
      return undefined;
    }
    if (target.scheme !== "file") {
      void vscode.window.showErrorMessage(`Bottleneck profiles notebooks on disk; ${target.toString()} is not one.`);
      return undefined;
    }
    const same = (d: { uri: vscode.Uri }): boolean => d.uri.toString() === target.toString();
    const open = vscode.workspace.notebookDocuments.find(same) ?? vscode.workspace.textDocuments.find(same);
    await saveFirst(open, target, "notebook");
    return target;
  }

  private async profileNotebook(arg: unknown): Promise<void> {
    const uri = await this.notebook(arg);
    if (uri !== undefined) {
      await this.run(uri, this.remembered(uri));
    }
  }

  private async openPlace(place: Place): Promise<void> {
    try {
      await openPlace(place);
    } catch (error) {
      this.log.warn(`could not open ${JSON.stringify(place)}: ${String(error)}`);
    }
  }

  private async profile(target: vscode.Uri | undefined, ask: boolean): Promise<void> {
    const uri = await this.script(target);
    if (uri === undefined) {
      return;
    }
    const args = ask ? await this.askArguments(uri) : this.remembered(uri);
    if (ask && args === undefined) {
      return; // input box dismissed
    }
    await this.run(uri, args);
  }

  /** Profiles a script or notebook on disk with the settings of its workspace folder. */
  private async run(uri: vscode.Uri, args: string[] | undefined): Promise<void> {
    const name = path.basename(uri.fsPath);
    // The settings of the script's own workspace folder (multi-root: each folder its own).
    const { request, interpreter } = await this.server.profileRequest(uri, args);
    this.log.info(
      `profiling ${uri.fsPath} with ${interpreter.path} (from ${interpreter.from})` +
        (request.args.length > 0 ? `, arguments ${joinArguments(request.args)}` : ""),
    );
    const key = uri.toString();
    this.running.set(key, (this.running.get(key) ?? 0) + 1);
    await this.setRunning();
    this.status.running(name);
    this.view.refresh();
    try {
      const result = (await this.server.execute("bottleneck.profile", [request], uri)) as ProfileResult | undefined;
      if ((this.running.get(key) ?? 0) > 1) {
        // Superseded: a newer request for this script restarted the job; its result will tell.
      } else if (result === undefined) {
        this.status.idle();
      } else if (result.status === "refused") {
        // The server has shown its message; say where a refused interpreter came from.
        this.log.error(`${name}: ${result.message ?? "refused"} (interpreter ${interpreter.path}, from ${interpreter.from})`);
        this.status.finished(`${name}: ${result.message ?? "refused"}`, false);
      } else {
        // A run stopped on request is not a failure.
        const fine = result.status === "ok" || result.status === "cancelled";
        this.status.finished(result.summary ?? `${name}: ${result.status ?? "done"}`, fine);
      }
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      this.log.error(`profiling ${name}: ${detail}`);
      this.status.finished(`${name}: failed`, false);
      void vscode.window.showErrorMessage(`Bottleneck: profiling ${name} failed: ${detail}`);
    } finally {
      const left = (this.running.get(key) ?? 1) - 1;
      if (left > 0) {
        this.running.set(key, left);
      } else {
        this.running.delete(key);
      }
      await this.setRunning();
      this.view.refresh();
    }
  }

  private async setRunning(): Promise<void> {
    await vscode.commands.executeCommand("setContext", "bottleneck.running", this.running.size > 0);
  }

  private async stop(target: vscode.Uri | undefined): Promise<void> {
    if (this.running.size === 0) {
      void vscode.window.showInformationMessage("Bottleneck: nothing is being profiled.");
      return;
    }
    const args = target && this.running.has(target.toString()) ? [target.toString()] : [];
    await this.server.execute("bottleneck.stop", args);
  }

  private async clear(): Promise<void> {
    await this.server.execute("bottleneck.clear", []);
    this.status.idle();
    this.view.refresh();
  }

  private async baseline(command: string, uri: vscode.Uri | undefined): Promise<void> {
    // Pin: the script's last result becomes what its lenses compare with ("-35% since
    // baseline"); clear: they compare with the previous run again.
    const target = uri ?? vscode.window.activeTextEditor?.document.uri;
    await this.server.execute(command, target?.scheme === "file" ? [target.toString()] : []);
    this.view.refresh();
  }

  private async openResult(target: vscode.Uri | undefined): Promise<void> {
    // A result made elsewhere (the CLI's --format json on a GPU node): the explorer's file,
    // else one the user picks; shown on this workspace's copy of the project.
    let file = target?.scheme === "file" && target.fsPath.endsWith(".json") ? target : undefined;
    if (file === undefined) {
      const picked = await vscode.window.showOpenDialog({
        canSelectMany: false,
        filters: { "Bottleneck result": ["json"] },
        openLabel: "Open Result",
        title: "A result written by bottleneck-lsp profile --format json",
      });
      file = picked?.[0];
    }
    if (file === undefined) {
      return;
    }
    const folders = vscode.workspace.workspaceFolders ?? [];
    const folder =
      folders.length > 1
        ? await vscode.window.showWorkspaceFolderPick({ placeHolder: "The folder that holds the profiled project" })
        : folders[0];
    if (folder === undefined) {
      if (folders.length === 0) {
        void vscode.window.showErrorMessage("Bottleneck: open the profiled project's folder first.");
      }
      return;
    }
    const name = path.basename(file.fsPath);
    this.log.info(`opening ${file.fsPath} on ${folder.uri.fsPath}`);
    const result = (await this.server.execute(
      "bottleneck.openResult",
      [{ path: file.fsPath, root: folder.uri.fsPath }],
      folder.uri,
    )) as OpenedResult | undefined;
    if (result === undefined || result.status === "refused") {
      return; // the server has shown why
    }
    this.status.finished(result.summary ?? `${name}: opened`, true);
    this.view.refresh();
    for (const skipped of result.skipped ?? []) {
      this.log.warn(`${name}: ${skipped.path}:${skipped.line} not shown: ${skipped.reason}`);
    }
    if (result.script !== undefined) {
      try {
        await vscode.window.showTextDocument(vscode.Uri.parse(result.script), { preview: false });
      } catch (error) {
        this.log.warn(`${name}: could not open ${result.script}: ${String(error)}`);
      }
    }
  }

  private async report(target: vscode.Uri | undefined): Promise<void> {
    // The server writes the report to a private file and asks VS Code to show it.
    await this.server.execute("bottleneck.report", target ? [target.toString()] : [], target);
  }
}

/** As "Run Python File" does: a document with unsaved edits is saved first, since the runner
 * profiles what is on disk; one that cannot be saved is profiled as it is on disk, and a
 * warning says so. */
async function saveFirst(
  document: { isDirty: boolean; save(): Thenable<boolean> } | undefined,
  target: vscode.Uri,
  what: "file" | "notebook",
): Promise<void> {
  if (document?.isDirty && !(await document.save())) {
    void vscode.window.showWarningMessage(
      `Bottleneck: ${path.basename(target.fsPath)} could not be saved; profiling the ${what} on disk.`,
    );
  }
}
