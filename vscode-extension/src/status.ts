// A status bar item with the running job or the last run's one-line summary; clicking it
// shows the report. A language status item (Python files) says which server and interpreter run.
import * as vscode from "vscode";

export class Status implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem("bottleneck.status", vscode.StatusBarAlignment.Left, 10);
  private readonly language = vscode.languages.createLanguageStatusItem("bottleneck.server", { language: "python" });

  constructor() {
    this.item.name = "Bottleneck";
    this.language.name = "Bottleneck server";
    this.idle();
    this.item.show();
    this.server("starting", "");
  }

  idle(): void {
    this.script = undefined;
    this.item.text = "$(pulse) Bottleneck";
    this.item.tooltip = "Bottleneck: profile the active Python script";
    this.item.command = "bottleneck-vscode.profile";
    this.item.backgroundColor = undefined;
  }

  private script: string | undefined; // the script being profiled, while it is

  running(script: string): void {
    this.script = script;
    this.item.text = `$(sync~spin) Profiling ${script}`;
    this.item.tooltip = "Bottleneck: profiling; click to stop";
    this.item.command = "bottleneck-vscode.stop";
    this.item.backgroundColor = undefined;
  }

  /** The job's progress as the passes complete ("pass 2/3: cprofile", the top line so far). */
  progress(message: string): void {
    if (this.script === undefined) {
      return;
    }
    const text = message.startsWith(`${this.script}:`) ? message.slice(this.script.length + 1).trim() : message;
    this.item.text = `$(sync~spin) ${this.script}: ${text.length > 70 ? text.slice(0, 69) + "…" : text}`;
    this.item.tooltip = `Bottleneck: profiling ${this.script}: ${message}\nClick to stop`;
  }

  finished(summary: string, ok: boolean): void {
    this.script = undefined;
    this.item.text = `${ok ? "$(pulse)" : "$(error)"} ${summary.length > 80 ? summary.slice(0, 79) + "…" : summary}`;
    this.item.tooltip = `${summary}\nClick to show the full report`;
    this.item.command = "bottleneck-vscode.report";
    this.item.backgroundColor = ok ? undefined : new vscode.ThemeColor("statusBarItem.errorBackground");
  }

  server(state: "starting" | "running" | "stopped" | "failed", detail: string): void {
    this.language.text = `Bottleneck: ${state}`;
    this.language.detail = detail;
    this.language.busy = state === "starting";
    this.language.severity =
      state === "failed" ? vscode.LanguageStatusSeverity.Error : vscode.LanguageStatusSeverity.Information;
    this.language.command = { title: "Restart", command: "bottleneck-vscode.restart" };
  }

  dispose(): void {
    this.item.dispose();
    this.language.dispose();
  }
}
