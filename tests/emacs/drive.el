;;; drive.el --- drive a real Emacs (batch) as a user would -*- lexical-binding: t -*-
;; CONFIG holds docs/editors.md's blocks for CLIENT, eglot or lsp-mode (the user's init file). Open
;; SCRIPT, M-x eglot (or M-x lsp), M-x bottleneck-profile; then read back what the screen
;; shows (Flymake's diagnostics, lsp-mode's lenses, the hover at HOVER_LINE, the echo area)
;; into OUT as JSON. When LONG is set,
;; profile that script too and kill Emacs once it runs (it writes STARTED): the pids of
;; Emacs's descendants are written first, for the test to check that none is left.
(require 'json)
(require 'subr-x)
(package-activate-all)  ; as an interactive Emacs does at start-up: the packages' autoloads
(defvar drive-lsp-mode (equal (getenv "CLIENT") "lsp-mode"))
(load (getenv "CONFIG") nil t)
(require (if drive-lsp-mode 'lsp-mode 'eglot))
(require 'flymake)

(defvar drive-messages nil "What the echo area showed.")
(advice-add 'message :after
            (lambda (format &rest args)
              (when format (push (apply #'format-message format args) drive-messages))))
(defvar drive-timeout (string-to-number (getenv "TIMEOUT_S")))
(defvar drive-out nil)

(defun drive-save ()
  (with-temp-file (getenv "OUT")
    (insert (json-encode (cons (cons 'messages (reverse drive-messages)) drive-out)))))

(defun drive-fail (why)
  (push (cons 'error why) drive-out)
  (drive-save)
  (kill-emacs 1))

(defun drive-wait (pred)
  (let ((end (+ (float-time) drive-timeout)))
    (while (and (not (funcall pred)) (< (float-time) end))
      (accept-process-output nil 0.05))
    (funcall pred)))

(defun drive-descendants (root)
  (let ((found nil) (todo (list root)))
    (while todo
      (let ((pid (pop todo)))
        (dolist (other (list-system-processes))
          (when (eql (alist-get 'ppid (process-attributes other)) pid)
            (push other found)
            (push other todo)))))
    found))

(defun drive-server ()
  "The server managing this buffer, once it answered initialize."
  (if drive-lsp-mode
      (let ((workspace (lsp-find-workspace 'bottleneck buffer-file-name)))
        (and workspace (eq (lsp--workspace-status workspace) 'initialized) workspace))
    (eglot-current-server)))

(defun drive-start ()
  "What the user types to have the server manage the current buffer."
  (python-mode)
  (if drive-lsp-mode
      (progn
        (unless (lsp-find-session-folder (lsp-session) buffer-file-name)
          (lsp-workspace-folders-add default-directory))  ; lsp-mode's "import project root?"
        (lsp))
    (unless (eglot-current-server)  ; a buffer of a managed project is taken on by python-mode
      (apply #'eglot (eglot--guess-contact))))  ; M-x eglot
  (unless (drive-wait #'drive-server)
    (drive-fail "the server did not start"))
  (flymake-start))  ; what Emacs's command loop does after it

(defun drive-hover (position)
  (let ((params `(:textDocument (:uri ,(if drive-lsp-mode (lsp--buffer-uri) (eglot--path-to-uri buffer-file-name)))
                  :position ,position)))
    (if drive-lsp-mode
        (with-lsp-workspaces (list (drive-server))
          (let ((hover (lsp-request "textDocument/hover" params)))
            (lsp-get (lsp-get hover :contents) :value)))
      (plist-get (plist-get (jsonrpc-request (drive-server) :textDocument/hover params) :contents) :value))))

(find-file (getenv "SCRIPT"))
(drive-start)
(bottleneck-profile)
(unless (drive-wait (lambda () (seq-find (lambda (m) (string-prefix-p "bottleneck: " m)) drive-messages)))
  (drive-fail "no summary in the echo area"))
(unless (drive-wait (lambda () (seq-find (lambda (d) (string-match-p "op CPU" (flymake-diagnostic-text d)))
                                         (flymake-diagnostics))))
  (drive-fail "no diagnostic with the cpu pass's figures"))

(defun drive-lenses ()
  "lsp-mode's lenses, as drawn: the text of its overlays."
  (delq nil (mapcar (lambda (ov)
                      (when (overlay-get ov 'lsp-lens)
                        ;; an after-string is drawn at the overlay's end, a before-string at its start
                        `((line . ,(line-number-at-pos (if (overlay-get ov 'after-string) (overlay-end ov) (overlay-start ov))))
                          (text . ,(substring-no-properties  ; at the line's end, or above it
                                   (or (overlay-get ov 'after-string) (overlay-get ov 'before-string) ""))))))
                    (overlays-in (point-min) (point-max)))))
(when drive-lsp-mode
  (unless (drive-wait (lambda () (seq-find (lambda (lens) (string-match-p "op CPU" (alist-get 'text lens)))
                                           (drive-lenses))))
    (drive-fail "no lens with the cpu pass's figures")))

(let (diagnostics hot)
  (dolist (d (flymake-diagnostics))
    (let ((line (line-number-at-pos (flymake-diagnostic-beg d))))
      (push `((line . ,line)
              (type . ,(symbol-name (flymake-diagnostic-type d)))
              (text . ,(flymake-diagnostic-text d)))
            diagnostics)
      (when (eql line (string-to-number (getenv "HOVER_LINE")))
        (setq hot d))))
  (push (cons 'diagnostics (vconcat diagnostics)) drive-out)
  (when hot  ; the hover shown at that line
    (save-excursion
      (goto-char (flymake-diagnostic-beg hot))
      (push (cons 'hover (drive-hover `(:line ,(1- (line-number-at-pos)) :character ,(current-column))))
            drive-out))))
(push (cons 'lenses (vconcat (drive-lenses))) drive-out)
;; a click on the hot line's lens (lsp-mode's mouse-1: the lens's action), then what the echo
;; area says
(when drive-lsp-mode
  (let* ((hot-line (string-to-number (getenv "HOVER_LINE")))
         (lens (seq-find (lambda (ov)
                           (and (overlay-get ov 'lsp-lens) (overlay-get ov 'after-string)
                                (eql (line-number-at-pos (overlay-end ov)) hot-line)))
                         (overlays-in (point-min) (point-max))))
         (shown (length drive-messages)))
    (when lens
      (funcall (get-text-property 1 'action (overlay-get lens 'after-string)))
      (drive-wait (lambda () (> (length drive-messages) shown)))
      (push (cons 'clicked (car drive-messages)) drive-out)
      (when (string-match "full report is in \\(.+\\)\\'" (car drive-messages))  ; the user opens it
        (push (cons 'report (with-temp-buffer
                              (insert-file-contents (match-string 1 (car drive-messages)))
                              (buffer-string)))
              drive-out)))))

(when-let ((long (getenv "LONG")))
  (find-file long)
  (drive-start)
  (bottleneck-profile)
  (unless (drive-wait (lambda () (file-exists-p (getenv "STARTED"))))
    (drive-fail "the long script did not start"))
  (push (cons 'pids (vconcat (drive-descendants (emacs-pid)))) drive-out))
(drive-save)
(kill-emacs 0)
