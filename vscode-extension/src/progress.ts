// The server's work-done progress as a cancellable notification. vscode-languageclient
// would show it in the status bar only, where it cannot be cancelled; cancelling here sends
// window/workDoneProgress/cancel, and the server kills the job's process group. Its messages
// (the pass running, the top line so far) also go to the status item.
import * as vscode from "vscode";
import {
  type LanguageClient,
  type ProgressToken,
  WorkDoneProgress,
  WorkDoneProgressCancelNotification,
  WorkDoneProgressCreateRequest,
} from "vscode-languageclient/node";

/** `onMessage`: each begin and report message as it comes (the status item shows them). */
export function showServerProgress(client: LanguageClient, onMessage: (message: string) => void): void {
  client.onRequest(WorkDoneProgressCreateRequest.type, ({ token }) => {
    follow(client, token, onMessage);
  });
}

function follow(client: LanguageClient, token: ProgressToken, onMessage: (message: string) => void): void {
  let finish: (() => void) | undefined;
  let report: vscode.Progress<{ message?: string; increment?: number }> | undefined;
  let reported = 0;
  const step = (message: string | undefined, percentage: number | undefined): void => {
    const increment = percentage === undefined ? undefined : Math.max(0, percentage - reported);
    if (percentage !== undefined) {
      reported = Math.max(reported, percentage);
    }
    report?.report({ message, increment });
    if (message) {
      onMessage(message);
    }
  };
  const listener = client.onProgress(WorkDoneProgress.type, token, (value) => {
    switch (value.kind) {
      case "begin":
        void vscode.window.withProgress(
          { location: vscode.ProgressLocation.Notification, title: value.title, cancellable: value.cancellable ?? false },
          (progress, cancellation) =>
            new Promise<void>((resolve) => {
              report = progress;
              finish = resolve;
              step(value.message, value.percentage);
              cancellation.onCancellationRequested(() => {
                void client.sendNotification(WorkDoneProgressCancelNotification.type, { token });
              });
            }),
        );
        break;
      case "report":
        step(value.message, value.percentage);
        break;
      case "end":
        listener.dispose();
        finish?.();
        if (value.message) {
          client.outputChannel.info(value.message);
        }
        break;
    }
  });
}
