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
    this.item.text = "$(pulse) Bottleneck";
    this.item.tooltip = "Bottleneck: profile the active Python script";
    this.item.command = "bottleneck-vscode.profile";
    this.item.backgroundColor = undefined;
  }

  running(script: string): void {
    this.item.text = `$(sync~spin) Profiling ${script}`;
    this.item.tooltip = "Bottleneck: profiling; click to stop";
    this.item.command = "bottleneck-vscode.stop";
    this.item.backgroundColor = undefined;
  }

  finished(summary: string, ok: boolean): void {
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
